#include "icdhint.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "settings.h"

/* Counts the .icd files of dir; *pocl is set when one loads PoCL. */
static int count_icds(const char *dir, int *pocl)
{
    DIR *d = opendir(dir);
    int n = 0;
    *pocl = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".icd"))
            continue;
        n++;
        char path[4096], lib[256] = "";
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(lib, sizeof lib, f) && strstr(lib, "pocl"))
            *pocl = 1;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return n;
}

/* Whether a directory can be made in dir: tried (and removed at once), as
 * access() says yes to root where the file system says no (/proc, read-only
 * mounts). */
static int can_mkdir_in(const char *dir)
{
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.tandem-probe-%ld", dir, (long)getpid());
    if (mkdir(probe, 0700) != 0)
        return 0;
    rmdir(probe);
    return 1;
}

/* Whether dir exists as a writable directory or could be made: its first
 * existing ancestor takes a new directory. Leaves nothing behind. */
static int creatable(const char *dir, char *why, size_t cap)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", dir);
    for (;;) {
        struct stat st;
        if (stat(p, &st) == 0) {
            if (!S_ISDIR(st.st_mode))
                snprintf(why, cap, "%s is not a directory", p);
            else if (!can_mkdir_in(p))
                snprintf(why, cap, "cannot create a directory in %s", p);
            else
                return 1;
            return 0;
        }
        char *slash = strrchr(p, '/');
        if (!slash || slash == p) {
            snprintf(why, cap, "no part of it exists");
            return 0;
        }
        *slash = '\0';
    }
}

void tdm_no_device_hint(char *buf, size_t cap)
{
    const char *dir = tdm_settings_icd_vendor_dir();
    int pocl;
    int n = count_icds(dir, &pocl);
    char cache[4096], why[4200];
    if (n == 0) {
        snprintf(buf, cap, "no OpenCL driver is installed: no .icd file in %s (install "
                           "pocl-opencl-icd or a GPU driver)", dir);
        return;
    }
    tdm_settings_pocl_cache_dir(cache, sizeof cache);
    if (pocl && !creatable(cache, why, sizeof why))
        snprintf(buf, cap, "%d OpenCL driver(s) installed in %s, but none gave a device: PoCL "
                           "fails when it cannot create its cache directory %s (%s); set "
                           "POCL_CACHE_DIR or XDG_CACHE_HOME to a writable directory",
                 n, dir, cache, why);
    else
        snprintf(buf, cap, "%d OpenCL driver(s) installed in %s, but none gave a device "
                           "(POCL_DEBUG=all or OCL_ICD_DEBUG=15 may say why)", n, dir);
}
