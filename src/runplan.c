#include "src/runplan.h"

#include <stdlib.h>
#include <string.h>

#include "src/env.h"

void run_plan_init(struct run_plan *p)
{
    memset(p, 0, sizeof(*p));
    p->userns_fd = p->pidns_fd = p->userns2_fd = -1;
    p->block_fd = p->sync_fd = -1;
}

void run_plan_free(struct run_plan *p)
{
    fs_ll_free(&p->landlock);
    fs_plan_free(&p->fs);
    sc_set_free(&p->filters);
    env_free(p->envp);
    p->envp = NULL;
    free(p->hostname);
    free(p->cwd_home);
    p->cwd_home = NULL;
    free(p->file);
    for (size_t i = 0; i < p->n_lock_files; i++)
        free(p->lock_files[i]);
    free(p->lock_files);
    p->hostname = p->file = NULL;
    p->lock_files = NULL;
    p->n_lock_files = 0;
}
