/** jest globalSetup: names this run (its main process) for scripts/services, so another run's teardown leaves this run's servers up. */
'use strict';

module.exports = async function setup() {
  if (!process.env.SR_TEST_RUN) process.env.SR_TEST_RUN = String(process.pid);
};
