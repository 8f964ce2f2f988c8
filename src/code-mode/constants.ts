/** The reserved Code Mode transport tool (R-CODE-1): never registered, shadowed, restricted or removed. */
export const RUN_CODE_NAME = 'run_code'
