#include "src/explain.h"

#include <limits.h>
#include <string.h>

static void list(FILE *out, const char *name, const struct pol_strv *sv)
{
    if (!sv->n) {
        fprintf(out, "  %-22s (none)\n", name);
        return;
    }
    for (size_t i = 0; i < sv->n; i++)
        fprintf(out, "  %-22s %s\n", i ? "" : name, sv->v[i]);
}

int explain_print(FILE *out, const struct explain_input *in)
{
    const struct policy *pol = in->pol;

    fprintf(out, "policy:\n");
    fprintf(out, "  %-22s %s\n", "working directory", pol->cwd);
    fprintf(out, "  %-22s %s\n", "config", in->config_used ? in->config_used : "(none)");
    list(out, "allow_write", &pol->allow_write);
    list(out, "deny_write", &pol->deny_write);
    list(out, "deny_read", &pol->deny_read);
    list(out, "allow_read", &pol->allow_read);
    fprintf(out, "  %-22s %u\n", "mandatory_deny_depth", pol->mandatory_deny_depth);
    fprintf(out, "  %-22s %s\n", "allow_git_init", pol->allow_git_init ? "yes" : "no");
    list(out, "protected config", &pol->config_files);
    list(out, "git configs read", &pol->git_config_files);
    if (pol->network_enabled)
        fprintf(out, "  %-22s proxy: http localhost:%u, socks5 localhost:%u\n", "network",
                pol->http_port, pol->socks_port);
    else
        fprintf(out, "  %-22s none (only lo)\n", "network");
    list(out, "allow_domain", &pol->allow_domain);
    list(out, "deny_domain", &pol->deny_domain);
    for (size_t i = 0; i < pol->n_deny_reasons; i++)
        fprintf(out, "  %-22s %s: %s\n", i ? "" : "deny_reason", pol->deny_reasons[i].host,
                pol->deny_reasons[i].text);
    list(out, "deny_address", &pol->deny_address);
    fprintf(out, "  %-22s %s\n", "unix sockets",
            pol->allow_all_unix_sockets ? "allowed" : "socket(AF_UNIX) blocked");
    fprintf(out, "  %-22s %s\n", "write monitor", pol->monitor_enabled ? "on" : "off");
    list(out, "monitor ignore", &pol->monitor_ignore);
    fprintf(out, "  %-22s %s\n", "violations log", pol->monitor_log ? pol->monitor_log : "(none)");
    fprintf(out, "  %-22s %s\n", "new session", pol->new_session ? "yes" : "no");

    if (in->rules) {
        const struct px_rules *r = in->rules;

        fprintf(out, "\nnetwork rules (in order; the first match decides):\n");
        fprintf(out, "  %-22s deny (malformed host)\n", "a malformed host");
        for (size_t i = 0; i < r->n_deny; i++)
            fprintf(out, "  %-22s deny (%s)\n", pol->deny_domain.v[i],
                    r->deny_reason[i] ? r->deny_reason[i] : "host is on the deny list");
        for (size_t i = 0; i < r->n_allow; i++)
            fprintf(out, "  %-22s allow\n", pol->allow_domain.v[i]);
        fprintf(out, "  %-22s deny (host is not on the allow list)\n", "anything else");
        fprintf(out,
                "  resolved-address guard: an allowed name is refused when it resolves only to "
                "loopback, unspecified, link-local, multicast, broadcast, cloud metadata "
                "addresses, this host's own addresses");
        for (size_t i = 0; i < pol->deny_address.n; i++)
            fprintf(out, ", %s", pol->deny_address.v[i]);
        fprintf(out, "\n");
        if (in->parent && in->parent->enabled)
            fprintf(out, "  parent proxy: %s:%u (from %s)%s%s\n", in->parent->host,
                    in->parent->port, in->parent->source,
                    in->parent->no_proxy[0] ? ", NO_PROXY " : "", in->parent->no_proxy);
        else
            fprintf(out, "  upstream: direct from the host\n");
    }

    fprintf(out, "\nmount plan (in order):\n");
    for (size_t i = 0; i < in->plan->n; i++) {
        char line[PATH_MAX * 2 + 64];

        fs_op_format(&in->plan->ops[i], line, sizeof(line));
        fprintf(out, "  %3zu  %s\n", i + 1, line);
    }
    if (in->filters) {
        struct nf_err err = { 0 };

        fprintf(out, "\nseccomp filters (libseccomp PFC):\n");
        fflush(out);
        if (sc_print_pfc(in->filters, out, &err) < 0) {
            fprintf(out, "  (cannot print: %s)\n", err.msg);
            return -1;
        }
    }
    fprintf(out, "\ncommand:");
    for (char **a = in->argv; *a; a++)
        fprintf(out, " %s", *a);
    fprintf(out, "\n");
    return ferror(out) ? -1 : 0;
}
