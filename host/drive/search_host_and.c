/* Ranked AND on the host path (search_host_and.h). */
#include "search_host_and.h"

#include "search_host_score.h"

#include "tandem.h"

#define END UINT32_MAX

/* A list's cursor: the block it is in, decoded when a candidate falls in
 * it; its frequencies decoded when a match needs them. */
typedef struct cursor {
    const tdm_hlist *h;
    uint32_t *dbuf, *fbuf;  /* [maxbs] a decoded block's docids, frequencies */
    uint32_t *mblk, *mpos;  /* [maxbs] at a lead block's document: its block, position */
    uint32_t blk;           /* the block the cursor is in */
    uint32_t dblk, fblk;    /* the blocks in dbuf, fbuf (END: none) */
    uint32_t pos;           /* in blk, once decoded */
    uint32_t len;           /* dblk's length */
    uint32_t last1;         /* a one-block list's last docid (it stores none) */
} cursor;

typedef struct walk {
    const tdm_hand *a;
    cursor *cs;        /* [nt] in term order */
    uint32_t *order;   /* [nt] terms by df, shortest first */
    uint32_t *cand;    /* [maxbs] a lead block's documents left */
    uint32_t *idx;     /* [maxbs] their positions in the lead block */
    uint32_t *dl;      /* [maxbs] the matches' document lengths */
    float *acc;        /* [maxbs] their sums */
    float *s;          /* [maxbs] their scores in one term */
    uint32_t *tf;      /* [maxbs] their frequencies in one term */
} walk;

static inline uint32_t last_of(const cursor *c, uint32_t b)
{
    return c->h->l.block_last ? c->h->l.block_last[b] : c->last1;
}

static int cursor_init(const walk *x, cursor *c, size_t t, uint32_t *mem)
{
    const tdm_hlist *h = &x->a->lists[t];
    uint32_t bs = x->a->maxbs;
    *c = (cursor){.h = h, .dbuf = mem, .fbuf = mem + bs, .mblk = mem + 2 * bs,
                  .mpos = mem + 3 * bs, .dblk = END, .fblk = END};
    if (h->l.nblocks != 1)
        return TDM_OK;
    int rc = tdm_hlist_docs(h, 0, c->dbuf, x->a->err);
    c->dblk = 0;
    c->len = tdm_hlist_block_len(h, 0);
    c->last1 = c->dbuf[c->len - 1];
    return rc;
}

/* The n candidates (ascending) that list c holds, kept in place (cand and
 * idx), each one's block and position in c recorded at its lead position;
 * their count returned, *ended set where c ends before the last (no later
 * document has every term), or an error. A candidate costs a compare or
 * two and a scan forward in the decoded block: no call, no branch on the
 * outcome. */
static int filter(const walk *x, cursor *c, uint32_t n, int *ended)
{
    uint32_t *cand = x->cand, *idx = x->idx, m = 0;
    uint32_t blk = c->blk, nb = c->h->l.nblocks, pos = c->pos;
    if (blk >= nb) { /* an empty list (none is written; a damaged index) */
        *ended = 1;
        return 0;
    }
    uint32_t last = last_of(c, blk);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t d = cand[i];
        if (d > last) {
            blk = tdm_hlist_skip(c->h, blk, c->last1, d);
            if (blk == nb) {
                *ended = 1;
                break;
            }
            last = last_of(c, blk);
        }
        if (c->dblk != blk) {
            int rc = tdm_hlist_docs(c->h, blk, c->dbuf, x->a->err);
            if (rc)
                return rc;
            c->dblk = blk;
            c->len = tdm_hlist_block_len(c->h, blk);
            pos = 0;
        }
        pos = tdm_hscan(c->dbuf, pos, c->len, d); /* the block ends at or above d */
        uint32_t o = idx[i];
        c->mblk[o] = blk;
        c->mpos[o] = pos;
        cand[m] = d;
        idx[m] = o;
        m += c->dbuf[pos] == d;
    }
    c->blk = blk;
    c->pos = pos;
    return (int)m;
}

/* The frequencies in c of the n matches of lead block lb into x->tf: a
 * block holding a few of them read value by value where the codec reads
 * one cheaply (long lists: a match or two a block), else decoded. */
static int tfs_of(const walk *x, cursor *c, int lead, uint32_t lb, uint32_t n)
{
    const uint32_t *idx = x->idx;
    int cheap = tdm_hlist_tf_cheap(c->h);
    for (uint32_t i = 0, r; i < n; i += r) {
        uint32_t b = lead ? lb : c->mblk[idx[i]];
        for (r = 1; i + r < n && (lead || c->mblk[idx[i + r]] == b); r++)
            ;
        if (c->fblk != b && cheap && r <= TDM_HLIST_FEW) {
            for (uint32_t j = i; j < i + r; j++) {
                int rc = tdm_hlist_tf_at(c->h, b, lead ? idx[j] : c->mpos[idx[j]], &x->tf[j],
                                         x->a->err);
                if (rc)
                    return rc;
            }
            continue;
        }
        if (c->fblk != b) {
            int rc = tdm_hlist_tfs(c->h, b, c->fbuf, x->a->err);
            if (rc)
                return rc;
            c->fblk = b;
        }
        for (uint32_t j = i; j < i + r; j++)
            x->tf[j] = c->fbuf[lead ? idx[j] : c->mpos[idx[j]]];
    }
    return TDM_OK;
}

/* The n matches of lead block lb scored, each sum in term order (a loop a
 * term: the document lengths gathered once, independent divisions), to
 * the top k. */
static int score(const walk *x, const uint32_t *order, uint32_t lb, uint32_t n)
{
    const tdm_hand *a = x->a;
    const tdm_scorer *sc = a->sc;
    if (sc->kind != TDM_SCORING_IMPACT)
        tdm_hscore_dls(a->dl, x->cand, n, x->dl);
    for (uint32_t i = 0; i < n; i++)
        x->acc[i] = 0.0f;
    cursor *lead = &x->cs[order[0]];
    for (size_t t = 0; t < a->nt; t++) {
        int rc = tfs_of(x, &x->cs[t], &x->cs[t] == lead, lb, n);
        if (rc)
            return rc;
        tdm_hscores(sc, t, x->tf, x->dl, n, x->s);
        for (uint32_t i = 0; i < n; i++)
            x->acc[i] = x->acc[i] + x->s[i];
    }
    for (uint32_t i = 0; i < n; i++)
        tdm_htopk_push(a->top, tdm_htopk_key(x->acc[i], x->cand[i]));
    return TDM_OK;
}

/* The lead list a block at a time: its documents filtered list by list,
 * the matches scored. */
static int and_walk(const walk *x)
{
    const tdm_hand *a = x->a;
    cursor *lead = &x->cs[x->order[0]];
    int ended = 0;
    for (uint32_t lb = 0; lb < lead->h->l.nblocks && !ended; lb++) {
        int rc = tdm_hlist_docs(lead->h, lb, x->cand, a->err);
        if (rc)
            return rc;
        uint32_t n = tdm_hlist_block_len(lead->h, lb);
        for (uint32_t i = 0; i < n; i++)
            x->idx[i] = i;
        for (size_t j = 1; j < a->nt && n; j++) {
            int m = filter(x, &x->cs[x->order[j]], n, &ended);
            if (m < 0)
                return m;
            n = (uint32_t)m;
        }
        if (n && (rc = score(x, x->order, lb, n)))
            return rc;
    }
    return TDM_OK;
}

static size_t up16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

size_t tdm_hand_bytes(size_t nt, uint32_t maxbs)
{
    return up16(nt * sizeof(cursor)) + up16(nt * sizeof(uint32_t)) +
           (4 * nt + 6) * up16(maxbs * sizeof(uint32_t));
}

int tdm_hand_rank(const tdm_hand *a, void *mem)
{
    size_t nt = a->nt, room = up16(a->maxbs * sizeof(uint32_t));
    char *p = mem;
    walk x = {.a = a, .cs = (cursor *)p};
    p += up16(nt * sizeof *x.cs);
    x.order = (uint32_t *)p;
    p += up16(nt * sizeof *x.order);
    x.cand = (uint32_t *)p;
    x.idx = (uint32_t *)(p += room);
    x.dl = (uint32_t *)(p += room);
    x.acc = (float *)(p += room);
    x.s = (float *)(p += room);
    x.tf = (uint32_t *)(p += room);
    p += room;
    for (size_t t = 0; t < nt; t++) {
        int rc = cursor_init(&x, &x.cs[t], t, (uint32_t *)(p + 4 * t * room));
        if (rc)
            return rc;
        size_t i = t; /* order: terms by df, shortest first */
        for (; i > 0 && a->lists[x.order[i - 1]].l.df > a->lists[t].l.df; i--)
            x.order[i] = x.order[i - 1];
        x.order[i] = (uint32_t)t;
    }
    return and_walk(&x);
}
