/* A lane's cost model (model.h): features, online least squares, the file. */
#include "model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/fsutil.h"
#include "tandem.h"

#define FORGET 0.995   /* weight of the past per observation: ~200 queries remembered */
#define RIDGE 1e-4     /* x n on the diagonal: keeps rarely varied features near 0 */
#define MIN_MS 0.01    /* no prediction below 10 us */
#define CLIP 4.0       /* a mature fit takes an observation as at most 4x off its prediction */
#define FILE_MAGIC "tandem-sched-model 1"

void tdm_qfeat_from_lens(const uint64_t *len, size_t n, uint32_t k, tdm_qfeat *f)
{
    uint64_t s1 = UINT64_MAX, s2 = UINT64_MAX, sum = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t l = len[i];
        sum += l;
        if (l < s1) {
            s2 = s1;
            s1 = l;
        } else if (l < s2) {
            s2 = l;
        }
    }
    if (s1 == UINT64_MAX)
        s1 = 0;
    if (s2 == UINT64_MAX)
        s2 = 0;
    /* UBOC: LOS x the log of every other list (the shortest once only) */
    double logs = 0;
    int skipped = 0;
    for (size_t i = 0; i < n; i++) {
        if (!skipped && len[i] == s1) {
            skipped = 1;
            continue;
        }
        logs += log2((double)len[i] + 1.0);
    }
    f->los = s1;
    f->x[0] = 1.0;
    f->x[1] = (double)s1 / 1e5;
    f->x[2] = (double)s2 / 1e5;
    f->x[3] = (double)sum / 1e6;
    f->x[4] = (double)n / 8.0;
    f->x[5] = (double)k / 1000.0;
    f->x[6] = (double)s1 * logs / 1e6;
}

void tdm_qfeat_from(const tdm_query *q, uint32_t k, tdm_qfeat *f)
{
    uint64_t len[TDM_SEARCH_MAX_TERMS];
    size_t n = q->nterms < TDM_SEARCH_MAX_TERMS ? q->nterms : TDM_SEARCH_MAX_TERMS;
    for (size_t i = 0; i < n; i++)
        len[i] = q->terms[i].df;
    tdm_qfeat_from_lens(len, n, k, f);
}

void tdm_model_init(tdm_model *m, int gpu)
{
    memset(m, 0, sizeof *m);
    m->gpu = gpu;
}

static double dot(const double *a, const double *b)
{
    double s = 0;
    for (int i = 0; i < TDM_MODEL_NF; i++)
        s += a[i] * b[i];
    return s;
}

/* Before any fit: a GPU pays a launch floor and streams postings fast, a
 * CPU starts at once and streams them slower (milliseconds). */
static double prior_ms(int gpu, const tdm_qfeat *f)
{
    return gpu ? 0.4 + 0.2 * f->x[3] : 0.1 + 2.0 * f->x[3];
}

double tdm_model_prior(const tdm_model *m, const tdm_qfeat *f)
{
    return prior_ms(m->gpu, f) * 1e-3;
}

double tdm_model_predict(const tdm_model *m, int alg, const tdm_qfeat *f)
{
    const tdm_model_fit *a = alg > 0 && alg < TDM_MODEL_NALG ? &m->fit[alg] : NULL;
    double ms;
    if (a && a->solved && a->n >= 2 * TDM_MODEL_NF)
        ms = dot(a->beta, f->x);
    else if (m->fit[0].solved && m->fit[0].n >= TDM_MODEL_NF)
        ms = dot(m->fit[0].beta, f->x);
    else
        ms = prior_ms(m->gpu, f);
    if (!(ms >= MIN_MS)) /* negative or NaN */
        ms = MIN_MS;
    return ms * 1e-3;
}

/* Solves (X'X + ridge) beta = X'y by Cholesky; keeps the old beta when the
 * system is not positive definite. */
static void solve(tdm_model_fit *a)
{
    enum { N = TDM_MODEL_NF };
    double l[N][N] = {{0}}, y[N], b[N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++) {
            double s = a->xtx[i][j] + (i == j ? RIDGE * a->n + 1e-9 : 0);
            for (int p = 0; p < j; p++)
                s -= l[i][p] * l[j][p];
            if (i == j) {
                if (!(s > 0))
                    return;
                l[i][i] = sqrt(s);
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    for (int i = 0; i < N; i++) {
        double s = a->xty[i];
        for (int p = 0; p < i; p++)
            s -= l[i][p] * y[p];
        y[i] = s / l[i][i];
    }
    for (int i = N - 1; i >= 0; i--) {
        double s = y[i];
        for (int p = i + 1; p < N; p++)
            s -= l[p][i] * b[p];
        b[i] = s / l[i][i];
    }
    memcpy(a->beta, b, sizeof b);
    a->solved = 1;
}

static void observe_fit(tdm_model_fit *a, const tdm_qfeat *f, double ms)
{
    for (int i = 0; i < TDM_MODEL_NF; i++) {
        for (int j = 0; j < TDM_MODEL_NF; j++)
            a->xtx[i][j] = FORGET * a->xtx[i][j] + f->x[i] * f->x[j];
        a->xty[i] = FORGET * a->xty[i] + f->x[i] * ms;
    }
    a->n = FORGET * a->n + 1.0;
    solve(a);
}

void tdm_model_observe(tdm_model *m, int alg, const tdm_qfeat *f, double seconds)
{
    if (!(seconds >= 0) || !isfinite(seconds))
        return;
    double ms = seconds * 1e3;
    const tdm_model_fit *a = alg > 0 && alg < TDM_MODEL_NALG ? &m->fit[alg] : &m->fit[0];
    if (a->solved && a->n >= 2 * TDM_MODEL_NF) {
        /* an outlier (a stall, a compilation) moves a mature fit only by a
         * bounded step: least squares would chase it */
        double p = tdm_model_predict(m, alg, f) * 1e3;
        ms = ms > CLIP * p ? CLIP * p : ms < p / CLIP ? p / CLIP : ms;
    }
    observe_fit(&m->fit[0], f, ms);
    if (alg > 0 && alg < TDM_MODEL_NALG)
        observe_fit(&m->fit[alg], f, ms);
    m->observed++;
}

/* ---- the file: a text line per fit, so that a person can read it */

int tdm_model_path(const char *dir, const char *platform, const char *device,
                   const char *driver, const char *version, int index, char *out, size_t n)
{
    if (!dir || !*dir)
        return 0;
    XXH64_state_t *st = XXH64_createState();
    if (!st)
        return 0;
    XXH64_reset(st, 0);
    const char *parts[] = {platform, device, driver, version};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        const char *p = parts[i] ? parts[i] : "";
        XXH64_update(st, p, strlen(p) + 1);
    }
    XXH64_update(st, &index, sizeof index);
    unsigned long long h = XXH64_digest(st);
    XXH64_freeState(st);
    int len = snprintf(out, n, "%s/sched-%016llx.model", dir, h);
    return len > 0 && (size_t)len < n;
}

int tdm_model_save(const tdm_model *m, const char *path, tdm_err *err)
{
    size_t cap = 64 + TDM_MODEL_NALG * (TDM_MODEL_NF * TDM_MODEL_NF + TDM_MODEL_NF + 4) * 26;
    char *buf = malloc(cap);
    if (!buf)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory writing %s", path);
    size_t len = (size_t)snprintf(buf, cap, "%s\nobserved %llu\n", FILE_MAGIC,
                                  (unsigned long long)m->observed);
    for (int a = 0; a < TDM_MODEL_NALG; a++) {
        const tdm_model_fit *f = &m->fit[a];
        len += (size_t)snprintf(buf + len, cap - len, "fit %d %.17g", a, f->n);
        for (int i = 0; i < TDM_MODEL_NF; i++)
            for (int j = 0; j < TDM_MODEL_NF; j++)
                len += (size_t)snprintf(buf + len, cap - len, " %.17g", f->xtx[i][j]);
        for (int i = 0; i < TDM_MODEL_NF; i++)
            len += (size_t)snprintf(buf + len, cap - len, " %.17g", f->xty[i]);
        len += (size_t)snprintf(buf + len, cap - len, "\n");
    }
    /* the directory is the binary cache's; it may not exist yet */
    char *dir = strdup(path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash && slash != dir) {
        *slash = 0;
        tdm_mkdirs(dir);
    }
    free(dir);
    const void *parts[] = {buf};
    size_t sizes[] = {len};
    int rc = TDM_OK;
    if (len >= cap || tdm_write_file_atomic(path, parts, sizes, 1) != 0)
        rc = tdm_err_set(err, TDM_ERR_IO, "cost model %s: %s", path,
                         len >= cap ? "too long" : strerror(errno));
    free(buf);
    return rc;
}

static int parse_fit(char **p, tdm_model_fit *f)
{
    char *end;
    f->n = strtod(*p, &end);
    if (end == *p || !(f->n >= 0))
        return 0;
    *p = end;
    for (int i = 0; i < TDM_MODEL_NF * TDM_MODEL_NF + TDM_MODEL_NF; i++) {
        double v = strtod(*p, &end);
        if (end == *p || !isfinite(v))
            return 0;
        *p = end;
        if (i < TDM_MODEL_NF * TDM_MODEL_NF)
            f->xtx[i / TDM_MODEL_NF][i % TDM_MODEL_NF] = v;
        else
            f->xty[i - TDM_MODEL_NF * TDM_MODEL_NF] = v;
    }
    return 1;
}

int tdm_model_load(tdm_model *m, const char *path)
{
    size_t size;
    char *text = (char *)tdm_read_file(path, &size);
    if (!text)
        return 0;
    tdm_model tmp;
    tdm_model_init(&tmp, m->gpu);
    char *nul = realloc(text, size + 1);
    int ok = nul != NULL;
    if (ok) {
        text = nul;
        text[size] = 0;
    }
    char *p = text;
    unsigned long long obs = 0;
    int used = 0;
    ok = ok && sscanf(p, FILE_MAGIC "\nobserved %llu\n%n", &obs, &used) == 1 && used > 0;
    p += used;
    for (int a = 0; ok && a < TDM_MODEL_NALG; a++) {
        int idx = -1, n = 0;
        ok = sscanf(p, "fit %d%n", &idx, &n) == 1 && idx == a;
        p += n;
        ok = ok && parse_fit(&p, &tmp.fit[a]);
        if (ok && tmp.fit[a].n > 0)
            solve(&tmp.fit[a]);
        while (ok && *p == '\n')
            p++;
    }
    free(text);
    if (!ok)
        return 0;
    tmp.observed = obs;
    *m = tmp;
    return 1;
}
