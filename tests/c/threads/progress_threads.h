/* Counting oxmpi's asynchronous progress thread from inside the process: it names itself
 * oxmpi-progress, which /proc/self/task/<tid>/comm shows (Linux). */
#ifndef PROGRESS_THREADS_H
#define PROGRESS_THREADS_H

#include "mtest.h"

#include <dirent.h>
#include <string.h>

/* Threads of this process named oxmpi-progress (-1: /proc unreadable). */
static int progress_threads(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    if (d == NULL) return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[300], name[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL) continue;
        if (fgets(name, sizeof name, f) != NULL && strncmp(name, "oxmpi-progress", 14) == 0) n++;
        fclose(f);
    }
    closedir(d);
    return n;
}

/* The count once it reaches `want` (the thread names itself as it starts, and an ended
 * thread leaves the list when it is joined), else after 10 s. */
static int progress_threads_settled(int want)
{
    int n = progress_threads();
    for (int i = 0; i < 1000 && n != want; i++) {
        mtest_sleep_ms(10);
        n = progress_threads();
    }
    return n;
}

#endif
