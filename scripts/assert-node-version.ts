// The Lambda runtime is nodejs24.x; npm scripts run on the `node` dev dependency, so any other major means
// the install is broken (for example npm scripts run with the machine's older Node).
const major = Number(process.versions.node.split('.')[0]);
if (major !== 24) {
  console.error(`expected Node.js 24 (the Lambda nodejs24.x runtime), got ${process.version}`);
  process.exit(1);
}
console.log(`node ${process.version}`);
