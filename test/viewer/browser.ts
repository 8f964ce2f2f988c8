// Real headless Chromium (Debian's `chromium`) driven by playwright-core.
import { mkdir } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { type Browser, chromium, type Page } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'

/** Screenshots and other artefacts of the browser tests (git-ignored). */
export const TEST_OUTPUT = fileURLToPath(new URL('../../test-output/', import.meta.url))

export async function launchBrowser(): Promise<Browser> {
  await mkdir(TEST_OUTPUT, { recursive: true })
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  })
}

/** What a page did that it must not: dialogs, requests, script errors, CSP violations. */
export interface PageWatch {
  dialogs: string[]
  requests: string[]
  errors: string[]
  consoleErrors: string[]
}

export function watchPage(page: Page): PageWatch {
  const watch: PageWatch = { dialogs: [], requests: [], errors: [], consoleErrors: [] }
  page.on('dialog', (dialog) => {
    watch.dialogs.push(dialog.message())
    void dialog.dismiss()
  })
  page.on('request', (request) => watch.requests.push(request.url()))
  page.on('pageerror', (error) => watch.errors.push(error.message))
  page.on('console', (message) => {
    if (message.type() === 'error') watch.consoleErrors.push(message.text())
  })
  return watch
}
