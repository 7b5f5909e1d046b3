/*
 * Failure test: the failures list starts this program with a malformed or out-of-range
 * OXMPI_* tunable.  MPI_Init must fail; under the default MPI_ERRORS_ARE_FATAL the job ends
 * with a non-zero status and a message naming MPI_Init, the variable and the value.  (oxmpi
 * only: other implementations ignore OXMPI_* variables.)
 *
 * The launcher ends the job when the first rank fails, so every rank first waits (at most
 * 10 s) until all ranks (PMI_SIZE) have recorded their pid for the runner's leftover check.
 */
#include "mtest.h"

static int lines_in(const char *path)
{
    FILE *f = fopen(path, "r");
    int n = 0, c;
    if (!f) {
        return 0;
    }
    while ((c = fgetc(f)) != EOF) {
        n += c == '\n';
    }
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    mtest_write_pidfile();
    const char *path = getenv("MTEST_PIDFILE"), *size = getenv("PMI_SIZE");
    if (path && *path && size) {
        for (int i = 0; i < 1000 && lines_in(path) < atoi(size); i++) {
            mtest_sleep_ms(10);
        }
    }
    MPI_Init(&argc, &argv); /* fails: MPI_ERRORS_ARE_FATAL ends the process */
    fprintf(stderr, "MPI_Init succeeded although a tunable is invalid\n");
    MPI_Finalize();
    return 0;
}
