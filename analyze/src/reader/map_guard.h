/* analyze/src/reader/map_guard.h: keep a mapped trace file from killing the process when the file
 * is truncated while it is parsed (a live job rewriting its trace): see map_guard.c. */
#ifndef GP_ANALYZE_MAP_GUARD_H
#define GP_ANALYZE_MAP_GUARD_H

#include <stddef.h>

#define MAP_GUARD_NONE (-1) /* no slot: map_guard_hit says no, map_guard_remove does nothing */

/* Guard the read-only file mapping [start, start + len). @return a slot for the calls below, or
 * MAP_GUARD_NONE when no slot is free or the handler cannot be installed (then do not map: read
 * instead). */
int map_guard_add(const void *start, size_t len);

/* @return 1 when the file shrank under the mapping: from the first page past its new end the
 * mapping reads as zeros. */
int map_guard_hit(int slot);

/* Stop guarding (before munmap). -1 is ignored. */
void map_guard_remove(int slot);

#endif
