/* metrics_text.h - a run's figures (sim/engine/metrics.h) as the text a
 * Prometheus server scrapes: OpenMetrics 1.0 (application/openmetrics-text),
 * or Prometheus's older text format 0.0.4 (text/plain) for a scraper that
 * does not ask for OpenMetrics. docs/metrics.md lists each metric. */
#ifndef LOCKLAB_METRICS_TEXT_H
#define LOCKLAB_METRICS_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "sim/engine/metrics.h"

enum metrics_format { METRICS_OPENMETRICS, METRICS_PROMETHEUS };

/* The Content-Type each format is served with. */
const char *metrics_content_type(enum metrics_format fmt);
/* The format an HTTP Accept header's value asks for (NULL: no header):
 * OpenMetrics when it names application/openmetrics-text with a q above
 * 0, as Prometheus 2.x asks first; the 0.0.4 text otherwise. */
enum metrics_format metrics_format_of(const char *accept);
/* m in format fmt into f; with no labels and no figures when m names no
 * run yet (its algorithm empty). 0, or -1 when f failed. */
int metrics_text(FILE *f, const struct metrics *m, const char *version, enum metrics_format fmt);

#endif
