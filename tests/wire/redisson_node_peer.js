#!/usr/bin/env node
// redisson_node_peer.js - node-redisson (npm's port of Redisson's RLock to
// Node.js, on ioredis's Cluster client) taking locks on a Redis Cluster
// beside locklab, so a test judges both from one merged history. Neither
// library is locklab's: the point is that a client written by others, from
// Redisson's published protocol, and locklab exclude each other.
//
// It writes its critical sections as a locklab history (docs/history.md),
// timed by process.hrtime.bigint(), which is CLOCK_MONOTONIC on Linux as
// locklab's clock is, so the files merge (tests/lib/history_merge.py). It
// counts how each wait ended: an unlock message on the lock's channel, or
// the wait's own timer. At the end one summary line:
//   redisson_node_peer client=.. owner=.. grants=.. waits=.. woken_message=..
//   woken_timeout=.. busy=.. errors=.. releases=.. lost=.. complete=true|false
//
//   node redisson_node_peer.js --nodes H:P,H:P --locks a,b --run-ms 5000
//     [--hold-ms 5] [--gap-ms 10] [--wait-ms 3000] [--lease-ms 3000]
//     [--client 1000] [--out FILE] [--deadline-s 30] [--holds N] [--no-lock]
//     [--unlock-publish publish|spublish]
// --unlock-publish spublish fills node-redisson's own placeholder in its
// unlock scripts (#PUB_UNLOCK_REPLACE#) with SPUBLISH, as Redisson's
// sharded mode unlocks. Its waits still SUBSCRIBE, so it then hears no
// unlock at all, its own included: Redis Cluster forwards a PUBLISH to the
// other nodes over the bus, late enough under load that a peer's own
// unlock can reach its next SUBSCRIBE on another node.
// exit: 0 done, 1 a lock error, 2 bad usage, 3 cut short by the deadline.
'use strict';

const fs = require('fs');
const path = require('path');
const modules = path.join(__dirname, 'node_modules');
const { Redisson } = require(path.join(modules, 'node-redisson'));
const { PubSubCommandExecutor } = require(path.join(modules, 'node-redisson/dist/executor/PubSubCommandExecutor'));
const { SYMBOL_TIMEOUT } = require(path.join(modules, 'node-redisson/dist/contracts/ICommandExecutor'));

function parse(argv) {
  const a = { unlockPublish: 'publish', holds: 1e9, noLock: false, holdMs: 5, gapMs: 10, waitMs: 3000, leaseMs: 3000, client: 1000, deadlineS: 30, runMs: 0 };
  const names = {
    '--nodes': 'nodes', '--locks': 'locks', '--run-ms': 'runMs', '--hold-ms': 'holdMs',
    '--gap-ms': 'gapMs', '--wait-ms': 'waitMs', '--lease-ms': 'leaseMs', '--client': 'client',
    '--out': 'out', '--deadline-s': 'deadlineS', '--holds': 'holds', '--no-lock': 'noLock',
    '--unlock-publish': 'unlockPublish',
  };
  for (let i = 2; i < argv.length; i += 2) {
    const k = names[argv[i]];
    if (k === 'noLock') { // the negative control: sections with no lock at all
      a.noLock = true;
      i--;
      continue;
    }
    if (!k || i + 1 >= argv.length) {
      process.stderr.write(`redisson_node_peer: unknown or incomplete option ${argv[i]}\n`);
      process.exit(2);
    }
    a[k] = /Ms$|^client$|S$|^holds$/.test(k) ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (!['publish', 'spublish'].includes(a.unlockPublish)) {
    process.stderr.write(`redisson_node_peer: --unlock-publish is publish or spublish, not ${a.unlockPublish}\n`);
    process.exit(2);
  }
  if (!a.nodes || !a.locks || !(a.runMs > 0)) {
    process.stderr.write('redisson_node_peer: --nodes, --locks and --run-ms are needed\n');
    process.exit(2);
  }
  a.nodes = a.nodes.split(',').map((hp) => {
    const at = hp.lastIndexOf(':');
    return { host: hp.slice(0, at), port: Number(hp.slice(at + 1)) };
  });
  a.locks = a.locks.split(',');
  return a;
}

const now = () => process.hrtime.bigint();
const { randomUUID } = require('crypto');

class History {
  constructor(file, client, ttlMs) {
    this.fd = file ? fs.openSync(file, 'w') : null;
    this.client = client;
    this.put({
      type: 'start', locklab: 1, mono_ns: now().toString(), wall_ns: (BigInt(Date.now()) * 1000000n).toString(),
      scenario: 'redisson_node_peer', algorithm: 'node-redisson', clients: client + 1, ttl_ms: ttlMs,
    });
  }
  put(obj) {
    if (this.fd === null) return;
    // the times are integers of nanoseconds, written unquoted
    const line = JSON.stringify(obj).replace(/"(time|mono_ns|wall_ns)":"(\d+)"/g, '"$1":$2');
    fs.writeSync(this.fd, line + '\n');
  }
  op(type, f, key, owner, error) {
    const line = { time: now().toString(), process: this.client, type, f, key, owner };
    if (error) line.error = error;
    this.put(line);
  }
  end(complete, reason) {
    const line = { type: 'end', mono_ns: now().toString(), complete };
    if (!complete) line.reason = reason;
    line.dropped = 0;
    this.put(line);
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const a = parse(process.argv);
  if (a.unlockPublish === 'spublish') {
    const proto = PubSubCommandExecutor.prototype;
    const scripts = proto.getRedisScripts;
    proto.getRedisScripts = function () {
      const got = scripts.call(this);
      for (const k of Object.keys(got)) {
        const to = got[k].replace("redis.call('publish',", "redis.call('spublish',");
        if (to === got[k]) throw new Error(`node-redisson's ${k} has no publish to replace`);
        got[k] = to;
      }
      return got;
    };
  }
  const n = { grants: 0, waits: 0, woken_message: 0, woken_timeout: 0, busy: 0, errors: 0, releases: 0, lost: 0 };
  const redisson = new Redisson({
    redis: { clusters: a.nodes, options: { maxRedirections: 16, retryDelayOnMoved: 20 } },
    lockWatchdogTimeout: BigInt(a.leaseMs),
  });
  // How each wait of tryLock ended: node-redisson's waitSubscribeOnce
  // resolves with the message, or with SYMBOL_TIMEOUT.
  const ex = redisson.commandExecutor;
  const wait = ex.waitSubscribeOnce.bind(ex);
  const woken = [];
  ex.waitSubscribeOnce = async (channel, ms) => {
    n.waits++;
    const t0 = now();
    const got = await wait(channel, ms);
    if (got === SYMBOL_TIMEOUT) n.woken_timeout++;
    else {
      n.woken_message++;
      woken.push(`${channel}=${JSON.stringify(String(got))}@${(now() - t0) / 1000000n}/${ms}ms`);
    }
    return got;
  };
  const hist = new History(a.out, a.client, a.leaseMs);
  const end = now() + BigInt(a.runMs) * 1000000n;
  const hard = setTimeout(() => {
    hist.end(false, 'deadline');
    process.stdout.write(`redisson_node_peer client=${a.client} complete=false\n`);
    process.exit(3);
  }, a.deadlineS * 1000);
  const clientId = randomUUID(); // one thread's, for every lock it takes
  let owner = '';
  let failed = '';
  try {
    for (let i = 0; now() < end && n.grants < a.holds; i++) {
      const name = a.locks[i % a.locks.length];
      const lock = redisson.getLock(name, clientId);
      owner = lock.getClientName(lock.clientId);
      hist.op('invoke', 'acquire', name, owner);
      let got;
      try {
        got = a.noLock ? true : await lock.tryLock(a.waitMs, a.leaseMs);
      } catch (e) {
        hist.op('info', 'acquire', name, owner, 'error');
        n.errors++;
        throw e;
      }
      if (!got) {
        hist.op('fail', 'acquire', name, owner, 'busy');
        n.busy++;
        continue;
      }
      hist.op('ok', 'acquire', name, owner);
      n.grants++;
      await sleep(a.holdMs);
      hist.op('invoke', 'release', name, owner);
      try {
        if (!a.noLock) await lock.unlock();
        hist.op('ok', 'release', name, owner);
        n.releases++;
      } catch (e) {
        if (/not locked by current client/.test(String(e))) {
          hist.op('fail', 'release', name, owner, 'lost');
          n.lost++;
        } else {
          hist.op('info', 'release', name, owner, 'error');
          n.errors++;
          throw e;
        }
      }
      await sleep(a.gapMs);
    }
  } catch (e) {
    failed = String(e && e.message ? e.message : e).replace(/\s+/g, ' ');
  }
  clearTimeout(hard);
  hist.end(failed === '', failed);
  await redisson.quit();
  const counts = Object.entries(n).map(([k, v]) => `${k}=${v}`).join(' ');
  process.stdout.write(`redisson_node_peer client=${a.client} owner=${owner} ${counts} complete=${failed === ''}\n`);
  if (failed) process.stderr.write(`redisson_node_peer: ${failed}\n`);
  for (const w of woken) process.stderr.write(`redisson_node_peer: woken by ${w}\n`);
  process.exit(failed ? 1 : 0);
}

main();
