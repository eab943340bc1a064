/* Temporary files next to an output: the index writer's, the exports', the
 * builder's run files, every tdm_outfile and atomic write.
 *
 * Names: BASE.tmp.PID.TAG, TAG TDM_TEMP_TAG_LEN random characters of
 * [0-9a-z] drawn from the system's random source, so that nobody can plant
 * a link or a file at the name beforehand; and the file is created
 * exclusively (O_CREAT|O_EXCL|O_NOFOLLOW), so that a name taken anyway is
 * never followed or truncated. The builder's run files use BASE = PREFIX.runN.
 *
 * A name is registered for cleanup (cleanup.h) from before the file exists
 * until it is renamed into place or removed; what a SIGKILL or a crash
 * leaves is found by tdm_cleanup_stale through tdm_temp_pid, which knows
 * exactly these shapes and nothing else.
 *
 * Threads: every function is thread-safe.
 */
#ifndef TDM_COMMON_TEMPFILE_H
#define TDM_COMMON_TEMPFILE_H

#include "tempname.h" /* TDM_TEMP_TAG_LEN, tdm_temp_pid */

/* A fresh name BASE.tmp.PID.TAG (malloc'd), registered for cleanup; the
 * file is not created. NULL when out of memory. */
char *tdm_temp_name(const char *base);
/* Creates `name` exclusively for reading and writing (mode 0644 less the umask, close on
 * exec): a file descriptor, or -1 with errno set (EEXIST or ELOOP: the
 * name is taken, by a file or a link). */
int tdm_temp_open(const char *name);
/* A new temporary file next to `path`: first removes what dead processes
 * left there (tdm_cleanup_stale), then names (a new TAG while a name is
 * taken) and creates it. A file descriptor with *tmp its registered name
 * (malloc'd), or -1 with errno set and *tmp NULL. */
int tdm_temp_create(const char *path, char **tmp);
/* The file was renamed into place: unregisters and frees `tmp`. NULL ok. */
void tdm_temp_keep(char *tmp);
/* Unlinks the file, unregisters and frees `tmp`. NULL ok. */
void tdm_temp_discard(char *tmp);

#endif
