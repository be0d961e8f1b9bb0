const c0 = process.cpuUsage();
await import(process.argv[2]);
const c = process.cpuUsage(c0);
console.log(((c.user + c.system) / 1000).toFixed(2));
