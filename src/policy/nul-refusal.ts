// Why a config string holding U+0000 is refused: an identity's subject, group or scope becomes part
// of agent ids and journal records, and PostgreSQL's text type cannot hold a NUL character.

/** The refusal a path-qualified config issue gives for a NUL character. */
export const NUL_REFUSAL = 'contains a NUL character (U+0000), which no identity may hold'
