// The list file of bench/downloads' C programs: one entry per line (a URL or a path), blank lines skipped.
#ifndef BENCH_LINES_H
#define BENCH_LINES_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The lines of `path`, without their line ends, in `*count`; NULL when the file cannot be read or memory runs out.
static char **read_lines(const char *path, size_t *count) {
    FILE *list = fopen(path, "r");
    if (!list) return NULL;
    char **lines = NULL, line[8192];
    size_t capacity = 0;
    *count = 0;
    while (fgets(line, sizeof line, list)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!*line) continue;
        if (*count == capacity) {
            capacity = capacity ? capacity * 2 : 1024;
            char **grown = realloc(lines, capacity * sizeof *lines);
            if (!grown) break;
            lines = grown;
        }
        if (!(lines[*count] = strdup(line))) break;
        ++*count;
    }
    int complete = feof(list) && !ferror(list);
    fclose(list);
    if (complete && lines) return lines;
    if (complete) return calloc(1, sizeof *lines);  // an empty list
    free(lines);
    return NULL;
}
#endif
