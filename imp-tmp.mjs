import { cpuUsage } from "node:process";
const c=()=>{const u=cpuUsage();return (u.user+u.system)/1000;};
const t0=c();
for (const m of process.argv.slice(2)) { const t=c(); await import(m); console.log(m, Math.round(c()-t)); }
console.log("total", Math.round(c()-t0), "process", Math.round(c()));
