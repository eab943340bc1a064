/* `tandem bench queries --per-query FILE`: a CSV row per timed query of
 * every series (warm-up queries are not rows), so that runs and processes
 * can be joined per query (two search variants, a GPU and a CPU):
 *   algorithm, k, device, mode, batch, threads  the series, as in --csv;
 *   query      the query's 0-based position among the file's queries (the
 *              same with the same --queries whatever --limit), id its id;
 *   latency_us the query's latency as the series counts it (a batch call's
 *              wall time for each query of the call);
 *   terms, len_min, len_second, len_max, len_sum, uboc  its features as the
 *              planner and the scheduler see them: distinct known terms and
 *              their lists' lengths (df), len_second 0 for one term, Wu's
 *              UBOC from the scheduler's own feature code (sched/model.h);
 *   ran, variant  the algorithm and the variant that answered ("host":
 *              the library's host path, TANDEM_HOST_MAX_POSTINGS; the
 *              oracle's rows: its name and "host");
 *   partitions the partitions it ran on at once, merged (a split or
 *              partitioned handle, docs/PARTITION.md); 0: whole on one lane. */
#include <stdint.h>
#include <string.h>

#include "cmd_bench_queries.h"
#include "common/fsutil.h"
#include "sched/model.h"
#include "tandem.h"

static const char *variant_name(int v)
{
    static const char *const names[] = {"auto", "item", "group", "compressed", "host"};
    return v >= 0 && v < 5 ? names[v] : "?";
}

/* The query's row tail: its features, from the lengths the search uses. */
static void features(FILE *f, const tdm_query *q, uint32_t k)
{
    uint64_t s1 = UINT64_MAX, s2 = UINT64_MAX, max = 0, sum = 0;
    for (size_t t = 0; t < q->nterms; t++) {
        uint64_t l = q->terms[t].df;
        sum += l;
        max = l > max ? l : max;
        if (l < s1) {
            s2 = s1;
            s1 = l;
        } else if (l < s2) {
            s2 = l;
        }
    }
    tdm_qfeat qf;
    tdm_qfeat_from(q, k, &qf);
    fprintf(f, "%zu,%llu,%llu,%llu,%llu,%.1f", q->nterms,
            (unsigned long long)(s1 == UINT64_MAX ? 0 : s1),
            (unsigned long long)(s2 == UINT64_MAX ? 0 : s2), (unsigned long long)max,
            (unsigned long long)sum, qf.x[6] * 1e6);
}

static void series_rows(FILE *f, const tdm_bq_series *r, const tdm_bq_queries *qs)
{
    for (size_t i = 0; i < r->n && i < qs->nq; i++) {
        char id[64];
        snprintf(id, sizeof id, "%s", qs->qf->q[qs->pos[i]].id);
        for (char *p = id; *p; p++)
            if (*p == ',' || *p == '"' || *p == '\n' || *p == '\r')
                *p = ' ';
        fprintf(f, "%s,%u,%d,%s,%u,%u,%zu,%s,%.3f,", r->algorithm, r->k, r->device,
                r->batch ? "batch" : "single", r->batch ? r->batch : 1, r->threads, qs->pos[i],
                id, r->perq[i].us);
        features(f, &qs->q[i], r->k);
        if (r->device < 0)
            fprintf(f, ",%s,host,0\n", r->algorithm);
        else
            fprintf(f, ",%s,%s,%u\n", tdm_algorithm_name(r->perq[i].ran),
                    variant_name(r->perq[i].variant), r->perq[i].partitions);
    }
}

int tdm_bq_write_perq(const char *path, const tdm_bq_set *s, const tdm_bq_queries *qs)
{
    tdm_outfile out;
    if (tdm_bq_open(&out, path))
        return -1;
    fprintf(out.f, "algorithm,k,device,mode,batch,threads,query,id,latency_us,terms,len_min,"
                   "len_second,len_max,len_sum,uboc,ran,variant,partitions\n");
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].perq)
            series_rows(out.f, &s->v[i], qs);
    return tdm_bq_commit(&out);
}
