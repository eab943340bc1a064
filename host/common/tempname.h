/* The shape of a temporary file's name, BASE.tmp.PID.TAG (tempfile.h): the
 * random TAG, and the PID read back by tdm_cleanup_stale (cleanup.h). */
#ifndef TDM_COMMON_TEMPNAME_H
#define TDM_COMMON_TEMPNAME_H

#define TDM_TEMP_TAG_LEN 12

/* TDM_TEMP_TAG_LEN random characters of [0-9a-z] from the system's random
 * source, and a NUL. */
void tdm_temp_tag(char tag[TDM_TEMP_TAG_LEN + 1]);

/* The PID in the end of a temporary file's name, what follows "BASE.":
 * "tmp.PID.TAG" or "runN.tmp.PID.TAG"; 0 if it has any other shape. */
long tdm_temp_pid(const char *tail);

#endif
