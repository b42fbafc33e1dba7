// tests/clients/checks.mjs — runs the checks of a client script (tests/clients/*_sdk.mjs) one
// after another, printing "ok NAME" or "FAILED NAME: stack" for each; resolves to the number
// that failed.
export async function runChecks(checks) {
  let failed = 0;
  for (const check of checks) {
    try {
      await check();
      console.log(`ok ${check.name}`);
    } catch (error) {
      failed++;
      console.log(`FAILED ${check.name}: ${error.stack ?? error}`);
    }
  }
  return failed;
}
