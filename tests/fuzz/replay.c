/* replay.c — a plain main() for a fuzz target, built by the normal compiler
 * without libFuzzer: every file named on the command line, and every file
 * inside a folder named there, is fed once to LLVMFuzzerTestOneInput. The
 * fuzz_replay_<target> ctest entries run it over tests/fuzz/corpus/<target>
 * and tests/fuzz/regressions/<target>, so a crash found once stays fixed in
 * the normal and the sanitizer builds. Prints how many files ran. */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (!buf) return -1;
    /* An exact-size copy, so that ASan sees reads past the end. */
    uint8_t *data = malloc(len ? len : 1);
    memcpy(data, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(data, len);
    free(data);
    return 0;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Replays path (a file, or the files of a folder, sorted); adds to *count. */
static int replay_path(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st) != 0) return 0; /* an absent regressions folder is fine */
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return replay_file(path);
    }
    DIR *dp = opendir(path);
    if (!dp) return -1;
    char **names = NULL;
    int n = 0, rc = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        if (e->d_name[0] == '.') continue;
        names = realloc(names, sizeof *names * (size_t)(n + 1));
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        snprintf(names[n++], len, "%s/%s", path, e->d_name);
    }
    closedir(dp);
    if (n) qsort(names, (size_t)n, sizeof *names, cmp_names);
    for (int i = 0; i < n; i++) {
        struct stat sub;
        if (rc == 0 && stat(names[i], &sub) == 0 && S_ISREG(sub.st_mode)) {
            (*count)++;
            rc = replay_file(names[i]);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    int count = 0, rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) rc = replay_path(argv[i], &count);
    printf("replayed %d inputs\n", count);
    return rc ? 1 : 0;
}
