#!/usr/bin/env node
// ioredis_slots.js - the slot ioredis's Cluster client sends each of a
// Redisson lock's keys to (its name, its channel, its unlock latch, named
// as Redisson names them), one line per lock name:
//   <name> <slot of name> <slot of channel> <slot of latch>
// and, with --nodes, the lock's hash as ioredis reads it from the master
// it routes to (following MOVED):  <name> hash <field>=<count> ...
//   node ioredis_slots.js [--nodes H:P,...] NAME...
'use strict';
const path = require('path');
const modules = path.join(__dirname, 'node_modules');
const Redis = require(path.join(modules, 'ioredis'));
const keySlot = require(path.join(modules, 'cluster-key-slot'));

const prefixName = (prefix, name) => (name.includes('{') ? `${prefix}:${name}` : `${prefix}:{${name}}`);

async function main() {
  const args = process.argv.slice(2);
  let nodes = null;
  if (args[0] === '--nodes') {
    nodes = args[1].split(',').map((hp) => ({ host: hp.split(':')[0], port: Number(hp.split(':')[1]) }));
    args.splice(0, 2);
  }
  for (const name of args) {
    const latch = `${prefixName('redisson_unlock_latch', name)}:0123456789abcdef0123456789abcdef`;
    const slots = [name, prefixName('redisson_lock__channel', name), latch].map((k) => keySlot(k));
    process.stdout.write(`${name} ${slots.join(' ')}\n`);
  }
  if (!nodes) return;
  const cluster = new Redis.Cluster(nodes, { maxRedirections: 16 });
  try {
    for (const name of args) {
      const h = await cluster.hgetall(name);
      const fields = Object.entries(h).map(([f, v]) => `${f}=${v}`).join(' ');
      process.stdout.write(`${name} hash ${fields}\n`);
    }
  } finally {
    cluster.disconnect();
  }
}
main().catch((e) => {
  process.stderr.write(`ioredis_slots: ${e.message}\n`);
  process.exit(1);
});
