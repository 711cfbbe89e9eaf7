/* tests/rewrite_oom.h - one check for both graph rewrites (cc_graph_fuse,
   cc_graph_decompose share a signature): with the context's allocator
   refusing the k-th request (alone, or every one from it on) for every k a
   successful run makes, the rewrite returns CC_ERR_OUT_OF_MEMORY with a
   message and *out NULL, leaks nothing and leaves the input unchanged; the
   same call then succeeds with the same result. Candidates are judged by
   one list pass (a sweep over every allocation of a run with the default
   judging search would take minutes). Include after harness.h and util.h. */
#ifndef TESTS_REWRITE_OOM_H
#define TESTS_REWRITE_OOM_H

typedef cc_result (*rw_fn)(cc_context*, cc_graph*, const cc_rewrite_desc*, cc_graph**, cc_rewrite_report*);

/* ta is the allocator of ctx; ok(rep) says whether the reference run made
   the rewrite the caller expects (described by what). */
static void check_rewrite_oom(cc_context* ctx, tu_alloc* ta, cc_graph* g, rw_fn rw, int (*ok)(const cc_rewrite_report*),
                              const char* what) {
    cc_graph* out = NULL;
    cc_rewrite_report rep;
    cc_rewrite_desc rd = {0};
    long n_calls, base, k, bad_code = 0, bad_out = 0, leaks = 0, changed_input = 0;
    uint64_t fp0, fp_ok = 0;
    rd.sched.method = CC_SCHED_LIST;
    cc_graph_validate(g);
    fp0 = tu_graph_fingerprint(g);
    base = ta->n_calls;
    if (rw(ctx, g, &rd, &out, &rep) == CC_OK) { fp_ok = tu_graph_fingerprint(out); cc_graph_destroy(out); }
    n_calls = ta->n_calls - base;
    CHECK(fp_ok != 0 && ok(&rep), "the reference run %s", what);
    for (k = 1; k <= n_calls; k++) {
        long live0 = ta->live;
        cc_result r;
        ta->fail_at = ta->n_calls + k;
        ta->fail_after = (int)(k & 1);   /* odd k: every request from the k-th on; even k: only the k-th */
        out = (cc_graph*)&out;
        r = rw(ctx, g, &rd, &out, &rep);
        ta->fail_at = 0;
        if (r != CC_ERR_OUT_OF_MEMORY) { if (!bad_code++) NOTE("k = %ld: %s", k, tu_res_name(r)); }
        if (out != NULL) { bad_out++; if (r == CC_OK) cc_graph_destroy(out); }
        if (ta->live != live0) { if (!leaks++) NOTE("k = %ld: %ld blocks leaked", k, ta->live - live0); }
        if (tu_graph_fingerprint(g) != fp0 || cc_graph_validate(g) != CC_OK) changed_input++;
    }
    CHECK(bad_code == 0, "refusing the k-th allocation, k = 1..%ld: always CC_ERR_OUT_OF_MEMORY (%ld other)", n_calls, bad_code);
    CHECK(bad_out == 0, "and *out NULL (%ld not)", bad_out);
    CHECK(leaks == 0, "and nothing leaked (%ld runs leaked)", leaks);
    CHECK(changed_input == 0, "and the input unchanged (%ld runs changed it)", changed_input);
    CHECK(cc_last_result(ctx) == CC_ERR_OUT_OF_MEMORY && strlen(cc_last_error(ctx)) > 0, "with a message: %s", cc_last_error(ctx));
    out = NULL;
    CHECK_RES(ctx, rw(ctx, g, &rd, &out, NULL), CC_OK, "afterwards the same call succeeds");
    CHECK(out && tu_graph_fingerprint(out) == fp_ok, "with the same result");
    cc_graph_destroy(out);
}

#endif
