/* fake_cupti.h: the simulated CUPTI's side door, used by the simulated driver (fake_cuda.c) to
 * make the records real CUPTI would make for a driver call, and by scenario programs to reach the
 * simulation's switches. libprof never sees this header: it talks to the fake through CUPTI's own
 * API (cupti.h), exactly as to the real library.
 *
 * The fake's failure modes are chosen with FAKE_CUPTI (comma-separated words):
 *   busy          cuptiSubscribe fails: another tool (Nsight, a sanitizer) holds the subscriber
 *   old           cuptiGetVersion says 12.0 (120000)
 *   fail_kind=N   cuptiActivityEnable(N) fails (CUPTI_ERROR_NOT_COMPATIBLE)
 *   stall         the worker thread never delivers: only cuptiActivityFlushAll does
 *   wsl           timestamps come from CLOCK_MONOTONIC_RAW, as on WSL, unless the client registered
 *                 its own clock with cuptiActivityRegisterTimestampCallback
 *   hoard=N       a buffer takes N records, then a fresh one is requested while the old ones are
 *                 kept until the next flush (a slow consumer: the client's cap makes CUPTI drop)
 *   work_first    device records (kernels, copies, sets) go into the buffer at launch, before
 *                 the call's external-correlation and API records (CUPTI's records come in
 *                 any order across buffers)
 *   exit_race     a forced flush keeps an empty buffer, and as it ends a buffer is requested
 *                 for another thread's first record (a thread still launching at exit)
 *   per_thread    each thread fills a buffer of its own (CUPTI 13's default), device records go
 *                 to CUPTI's own, and a flush hands that one back first: kernels arrive before
 *                 the API records that launched them
 *   cc=N          the device record's compute capability major is N (9 by default: Hopper)
 *   late          one more buffer reaches the completion callback 50 ms after the last forced
 *                 flush (records arriving after the client's exit flush)
 *   multi         CUPTI 13.3+ with several subscribers (cuptiGetVersion says 130300): a second
 *                 cuptiSubscribe succeeds beside the first instead of failing with
 *                 CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED; each gets the callbacks it
 *                 enabled; a second client's cuptiActivityRegisterCallbacks gives it buffers of
 *                 its own (a copy of every buffer the first gets) rather than taking the first's
 *                 over; a kind stays enabled while a client has it on; cuptiFinalize tears CUPTI
 *                 down for every subscriber in the process (cupti_activity.h: it "destroys and
 *                 cleans up all the resources associated with CUPTI in the current process"),
 *                 the second included (co_detached in the stats)
 * Always, as CUPTI 13 does: kernels' queued is 0 unless cuptiActivityEnableLatencyTimestamps;
 * cuptiActivityFlushAll before cuptiActivityRegisterCallbacks fails; a buffer not 8-byte
 * aligned is not used (counted as misaligned, its records dropped); a forked child's CUPTI call
 * is written to FAKE_CUPTI_STATS.child.
 * FAKE_CUPTI_STATS=PATH writes the fake's counters as JSON at exit (records made, delivered,
 * dropped; cuptiFinalize calls; whether a client is still attached and buffers still held), for
 * tests to compare with what the trace says. */
#ifndef GP_TESTS_FAKE_CUPTI_H
#define GP_TESTS_FAKE_CUPTI_H

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

/** Now, on the clock CUPTI stamps records with (the client's callback, if registered). */
uint64_t fake_cupti_now(void);
/** A fresh correlation id. */
uint32_t fake_cupti_correlation(void);
/** Take / release CUPTI's internal lock around an API call (records are made under it). */
void fake_cupti_enter(void);
void fake_cupti_leave(void);
/** An API call's record (runtime or driver kind, if enabled), preceded by the external
 * correlation records of the ids this thread has pushed. Call between enter and leave. */
void fake_cupti_api(CUpti_ActivityKind kind, uint32_t cbid, uint64_t start, uint64_t end,
                    uint32_t corr);
/** A host-side record (memory, sync): into the buffer now, if its kind is enabled. Call between
 * enter and leave, as the two below. */
void fake_cupti_host_record(const CUpti_Activity *rec, size_t size);
/** A SYNCHRONIZATION record of `type` from `start` to now, as a host record. */
void fake_cupti_sync_record(CUpti_ActivitySynchronizationType type, uint64_t start, uint32_t corr,
                            uint32_t context, uint32_t stream);
/** Device work (kernel, memcpy, memset) that ends at `end`: delivered once it has ended; a
 * forced flush before that delivers it without timestamps, as real CUPTI does. */
void fake_cupti_device_record(const CUpti_Activity *rec, size_t size, uint64_t end,
                              uint32_t context);
/** A CUDA graph launch's device records (between enter and leave): a kernel record per node,
 * each with the launch's correlation id and its graph and node ids, or, while
 * CUPTI_ACTIVITY_KIND_GRAPH_TRACE is enabled, only `graph` (one record for the whole launch:
 * real CUPTI then makes no record of the nodes). */
void fake_cupti_graph_launch(const CUpti_ActivityKernel10 *nodes, int n,
                             const CUpti_ActivityGraphTrace2 *graph, uint32_t context);
/** Wait until every device record of `context` has ended (what cuCtxSynchronize waits for). */
void fake_cupti_synchronize(uint32_t context);
/** Call the subscriber's callback for `cbid` of `domain` at `site`. */
void fake_cupti_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         CUpti_ApiCallbackSite site);
/** A resource callback (CUPTI_CB_DOMAIN_RESOURCE) for `ctx`, if the subscriber enabled it. */
void fake_cupti_resource(CUpti_CallbackId cbid, CUcontext ctx);
/** A device reset: device work and records not yet delivered are destroyed. */
void fake_cupti_device_reset(void);
/** @return whether latency timestamps are on (kernels' queued/submitted; off by default). */
int fake_cupti_latency(void);
/** @return whether `kind` is enabled (between enter and leave). */
int fake_cupti_enabled(CUpti_ActivityKind kind);

#endif
