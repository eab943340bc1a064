/* Temporary files that must not outlive their process (tempfile.h names
 * and creates them).
 *
 * A creator registers a path before it creates the file and unregisters it
 * once the file is renamed into place or removed. A program that wants them
 * removed when it is interrupted calls tdm_cleanup_on_signals once (the CLI
 * does; a library never installs handlers by itself). Whatever a SIGKILL or a
 * crash leaves behind, the next build or import into the same path finds
 * with tdm_cleanup_stale: names of tempfile.h's shapes that carry the PID of
 * a process that no longer exists.
 *
 * Threads: add/remove are thread-safe. The handler reads the registry
 * without locking (async-signal-safe: only unlink, sigaction, raise).
 */
#ifndef TDM_COMMON_CLEANUP_H
#define TDM_COMMON_CLEANUP_H

#include <stddef.h>

/* Registers `path` (copied). 0, or -1 when out of memory. */
int tdm_cleanup_add(const char *path);
/* Unregisters one registration of `path`; no-op if it has none. */
void tdm_cleanup_remove(const char *path);
/* Unlinks every registered path. Async-signal-safe. */
void tdm_cleanup_unlink_all(void);
/* For SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE and SIGXFSZ whose action is
 * the default: a handler that unlinks every registered path, then restores
 * the default action and raises the signal again (the exit status stays
 * that of the signal). Signals the program ignores stay ignored. */
void tdm_cleanup_on_signals(void);

/* Removes the leftovers of killed processes next to `prefix` (a path): files
 * named PREFIX.tmp.PID.TAG or PREFIX.runN.tmp.PID.TAG (tdm_temp_pid in
 * tempname.h knows the shapes, TAG included), regular files of this user (not links), whose
 * PID is not that of a live process (kill(PID, 0) fails with ESRCH): a file
 * a user named otherwise is never touched. A process in another PID
 * namespace or on another host sharing the directory counts as dead: such
 * setups should write elsewhere (or to distinct paths). Returns how many
 * were removed; when `names` is not NULL, the first of them is copied there
 * (NUL-terminated, truncated to names_len) for a message. */
size_t tdm_cleanup_stale(const char *prefix, char *names, size_t names_len);

#endif
