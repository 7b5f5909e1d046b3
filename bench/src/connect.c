/*
 * connect.c - time the accept/connect round trip between two separately started jobs
 * (issue 26): `connect server FILE [R]` opens a port, writes its name to FILE and accepts
 * R + 1 times on it; `connect client FILE [R]` reads the name and, R + 1 times, connects,
 * sends one int, receives the server's answer and disconnects. Each client iteration is
 * timed from before MPI_Comm_connect to the end of MPI_Comm_disconnect; the first one is
 * an untimed warm-up. One process per job (run both with -n 1).
 *
 * Output (common.h's convention, client side): '#' comments, then one line per
 * repetition with the columns "rep seconds", then "# min/median seconds" lines.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void server(const char *file, int reps)
{
    char port[MPI_MAX_PORT_NAME], tmp[4096];
    MPI_Open_port(MPI_INFO_NULL, port);
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", tmp);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fprintf(f, "%s\n", port);
    fclose(f);
    rename(tmp, file);
    for (int r = 0; r <= reps; r++) {
        MPI_Comm inter;
        int v;
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
        MPI_Recv(&v, 1, MPI_INT, 0, 0, inter, MPI_STATUS_IGNORE);
        v += 1;
        MPI_Send(&v, 1, MPI_INT, 0, 1, inter);
        MPI_Comm_disconnect(&inter);
    }
    MPI_Close_port(port);
}

static void client(const char *file, int reps)
{
    char port[MPI_MAX_PORT_NAME] = "";
    FILE *f = NULL;
    for (int i = 0; i < 6000 && !(f = fopen(file, "r")); i++)
        usleep(10000);
    if (!f || !fgets(port, sizeof port, f)) {
        fprintf(stderr, "no port name in %s\n", file);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fclose(f);
    port[strcspn(port, "\n")] = 0;
    double t[1001];
    printf("# accept/connect + one exchange + disconnect, %d repetitions\n", reps);
    printf("# columns: rep seconds\n");
    for (int r = 0; r <= reps; r++) {
        MPI_Comm inter;
        int v = 100 + r;
        double t0 = MPI_Wtime();
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
        MPI_Send(&v, 1, MPI_INT, 0, 0, inter);
        MPI_Recv(&v, 1, MPI_INT, 0, 1, inter, MPI_STATUS_IGNORE);
        MPI_Comm_disconnect(&inter);
        double dt = MPI_Wtime() - t0;
        if (v != 101 + r) {
            fprintf(stderr, "VALIDATION FAILED: answer %d, expected %d\n", v, 101 + r);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (r > 0) {
            t[r - 1] = dt;
            printf("%d %.6f\n", r - 1, dt);
            fflush(stdout);
        }
    }
    qsort(t, reps, sizeof t[0], cmp);
    printf("# min %.6f\n# median %.6f\n", t[0], t[reps / 2]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int reps = argc > 3 ? atoi(argv[3]) : 10;
    if (argc < 3 || reps < 1 || reps > 1000 ||
        (strcmp(argv[1], "server") != 0 && strcmp(argv[1], "client") != 0)) {
        fprintf(stderr, "usage: connect server|client FILE [1 <= R <= 1000]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (argv[1][0] == 's')
        server(argv[2], reps);
    else
        client(argv[2], reps);
    MPI_Finalize();
    return 0;
}
