/* trace_meta.h: top-level keys other than traceEvents (schemaVersion, baseTimeNanoseconds,
 * deviceProperties, distributedInfo, "gprof", anything else) captured as compact JSON and read. */
#ifndef GP_ANALYZE_TRACE_META_H
#define GP_ANALYZE_TRACE_META_H

#include "reader/trace_build.h"

/* Parse the value of top-level `key` at b->lex.p and record it in the trace.
 * @return GP_OK, GP_MORE (nothing recorded) or GP_EPARSE. */
gp_status trace_meta_value(trace_builder *b, const char *key);

#endif
