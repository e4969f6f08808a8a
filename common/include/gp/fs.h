/* gp/fs.h: small filesystem helpers shared by the libraries and the CLI. */
#ifndef GP_COMMON_FS_H
#define GP_COMMON_FS_H

#include "gp/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Create folder `path` and any missing parents (mkdir -p), mode 0777 before the umask.
 * An existing folder is fine. Thread-safe.
 * @return GP_OK; GP_EINVAL for a path over 4095 bytes; GP_EIO naming the folder that could not
 * be created (err->path) and why. */
gp_status gp_mkdir_p(const char *path, gp_error *err);

#ifdef __cplusplus
}
#endif
#endif
