/* rules_list.h: the rule catalogue, in id order -- the one list. Each entry is a rule file
 * rules/rule_<name>.c that defines `rules_<name>()` and, with RULES_INFO, its id, title,
 * parameters, phase and needs. rules_int.h declares every entry and rules.c makes the table of
 * them (include this file with RULES_X defined). Adding a rule: README, "Adding a rule". */
RULES_X(trace_quality)         /* GT00 */
RULES_X(dataloader_starvation) /* GT01 */
RULES_X(gpu_low_util)          /* GT02 */
RULES_X(gpu_idle_gaps)         /* GT03 */
RULES_X(host_launch_bound)     /* GT04 */
RULES_X(small_kernels)         /* GT05 */
RULES_X(pageable_memcpy)       /* GT06 */
RULES_X(sync_copy_or_memset)   /* GT07 */
RULES_X(excessive_sync)        /* GT08 */
RULES_X(exposed_transfer)      /* GT09 */
RULES_X(near_oom)              /* GT10 */
RULES_X(allocator_churn)       /* GT11 */
RULES_X(memory_growth)         /* GT12 */
RULES_X(no_tensor_cores)       /* GT13 */
RULES_X(step_outliers)         /* GT14 */
RULES_X(comm_exposed)          /* GT15 */
RULES_X(optimizer_bound)       /* GT17 */
RULES_X(tiny_cpu_ops)          /* GT18 */
RULES_X(cpu_contention)        /* GT19 */
RULES_X(channels_last)         /* GT20 */
