/* metrics_http.h - the metrics endpoint of run and compare (--metrics
 * HOST:PORT): a small HTTP/1.1 server on a thread of its own
 * ("locklab-metrics") that answers GET /metrics with the figures of the
 * run under way (sim/engine/metrics.h) in the text a Prometheus server
 * scrapes (metrics_text.h). One connection at a time, its request read
 * with a size cap and a timeout, closed after each answer; the figures
 * are read off the clients' counters, so a scrape never waits on them.
 *
 * The face binds it before anything starts (a port it cannot take: exit
 * 3, nothing run), follows each run's runner through its progress hooks,
 * keeps the last figures once the clients are done, and stops it once the
 * reports are written (after --metrics-linger S more seconds).
 */
#ifndef LOCKLAB_METRICS_HTTP_H
#define LOCKLAB_METRICS_HTTP_H

#include <stddef.h>

struct metrics_http;
struct runner;

/* --metrics's value: HOST:PORT, HOST an IPv4 address, [an IPv6 one], a
 * name (localhost) or nothing (":9464": every address), PORT 1..65535.
 * 0, or -1 with why in err. */
int metrics_address_check(const char *text, char *err, size_t errlen);
/* Listen on text's address (checked) and serve from now on. NULL with err
 * set ("cannot listen on ADDRESS: REASON") when it cannot. */
struct metrics_http *metrics_http_start(const char *text, char *err, size_t errlen);
/* Serve r's figures from now (r: given before any client connects); NULL:
 * the run's clients are done and r is about to be freed: its last
 * figures are read and served from then on. */
void metrics_http_follow(struct metrics_http *h, struct runner *r);
/* Serve the last figures linger_s seconds more (a signal cuts it short;
 * none when no run was followed), then end the thread and close the
 * socket; accepts NULL. */
void metrics_http_stop(struct metrics_http *h, double linger_s);

#endif
