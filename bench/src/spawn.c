/*
 * spawn.c - time MPI_Comm_spawn of N children (default 4) up to the end of the first
 * message exchange with them, as issue 26's target describes: the parent (one process,
 * MPI_COMM_WORLD of size 1) starts the clock, spawns, sends one int to every child and
 * receives every child's answer, then stops the clock; the children and the parent then
 * disconnect. Repeated R times (default 5) after one untimed warm-up spawn.
 *
 *   spawn [N] [R]
 *
 * Output (common.h's convention): '#' comments, then one line per repetition with the
 * columns "rep seconds", then "# min/median seconds" summary lines.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int child(MPI_Comm parent)
{
    int v = -1, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Recv(&v, 1, MPI_INT, 0, 0, parent, MPI_STATUS_IGNORE);
    v += rank;
    MPI_Send(&v, 1, MPI_INT, 0, 1, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
}

static double once(const char *prog, int n, int check)
{
    MPI_Comm inter;
    int errs = 0;
    double t0 = MPI_Wtime();
    MPI_Comm_spawn(prog, MPI_ARGV_NULL, n, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
                   MPI_ERRCODES_IGNORE);
    for (int i = 0; i < n; i++)
        MPI_Send(&check, 1, MPI_INT, i, 0, inter);
    for (int i = 0; i < n; i++) {
        int v;
        MPI_Recv(&v, 1, MPI_INT, i, 1, inter, MPI_STATUS_IGNORE);
        errs += v != check + i;
    }
    double t = MPI_Wtime() - t0;
    MPI_Comm_disconnect(&inter);
    if (errs) {
        fprintf(stderr, "error: %d children answered wrongly\n", errs);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return t;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Comm parent;
    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return child(parent);
    int n = argc > 1 ? atoi(argv[1]) : 4, reps = argc > 2 ? atoi(argv[2]) : 5;
    if (n < 1 || reps < 1 || reps > 1000) {
        fprintf(stderr, "usage: spawn [N >= 1] [1 <= R <= 1000]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double t[1000];
    once(argv[0], n, 100);
    printf("# spawn of %d children + first exchange, %d repetitions\n", n, reps);
    printf("# columns: rep seconds\n");
    for (int r = 0; r < reps; r++) {
        t[r] = once(argv[0], n, 200 + r);
        printf("%d %.6f\n", r, t[r]);
        fflush(stdout);
    }
    qsort(t, reps, sizeof t[0], cmp);
    printf("# min %.6f\n# median %.6f\n", t[0], t[reps / 2]);
    MPI_Finalize();
    return 0;
}
