#include "src/runplan.h"

#include "src/env.h"

void run_plan_free(struct run_plan *p)
{
    fs_plan_free(&p->fs);
    sc_set_free(&p->filters);
    env_free(p->envp);
    p->envp = NULL;
}
