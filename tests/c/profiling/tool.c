/*
 * A profiling tool in the style the MPI standard's profiling interface describes: it
 * defines MPI_ functions, counts each call and forwards it to the PMPI_ name. Built as a
 * shared object (linked before -lmpi, or loaded with LD_PRELOAD) or as a plain object
 * linked into the program. oxtool_count(name) reports a counter; oxtool_pcontrol_level()
 * the last level given to MPI_Pcontrol.
 */
#include <mpi.h>

#include <stdarg.h>
#include <string.h>

enum {
    C_INIT, C_INIT_THREAD, C_FINALIZE, C_SEND, C_RECV, C_ISEND, C_IRECV, C_WAIT, C_WAITALL,
    C_SENDRECV, C_BCAST, C_ALLREDUCE, C_BARRIER, C_COMM_RANK, C_COMM_SIZE, C_PCONTROL, C_N
};
static const char *const names[C_N] = {
    "MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Send", "MPI_Recv", "MPI_Isend",
    "MPI_Irecv", "MPI_Wait", "MPI_Waitall", "MPI_Sendrecv", "MPI_Bcast", "MPI_Allreduce",
    "MPI_Barrier", "MPI_Comm_rank", "MPI_Comm_size", "MPI_Pcontrol",
};
static long counts[C_N];
static int pcontrol_level = -1;

long oxtool_count(const char *name)
{
    for (int i = 0; i < C_N; i++) {
        if (strcmp(names[i], name) == 0) {
            return counts[i];
        }
    }
    return -1;
}

int oxtool_pcontrol_level(void)
{
    return pcontrol_level;
}

int MPI_Init(int *argc, char ***argv)
{
    counts[C_INIT]++;
    return PMPI_Init(argc, argv);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    counts[C_INIT_THREAD]++;
    return PMPI_Init_thread(argc, argv, required, provided);
}

int MPI_Finalize(void)
{
    counts[C_FINALIZE]++;
    return PMPI_Finalize();
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    counts[C_SEND]++;
    return PMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    counts[C_RECV]++;
    return PMPI_Recv(buf, count, type, src, tag, comm, st);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    counts[C_ISEND]++;
    return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    counts[C_IRECV]++;
    return PMPI_Irecv(buf, count, type, src, tag, comm, req);
}

int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    counts[C_WAIT]++;
    return PMPI_Wait(req, st);
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    counts[C_WAITALL]++;
    return PMPI_Waitall(n, reqs, sts);
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                 int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Status *st)
{
    counts[C_SENDRECV]++;
    return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, st);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    counts[C_BCAST]++;
    return PMPI_Bcast(buf, count, type, root, comm);
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    counts[C_ALLREDUCE]++;
    return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
}

int MPI_Barrier(MPI_Comm comm)
{
    counts[C_BARRIER]++;
    return PMPI_Barrier(comm);
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    counts[C_COMM_RANK]++;
    return PMPI_Comm_rank(comm, rank);
}

int MPI_Comm_size(MPI_Comm comm, int *size)
{
    counts[C_COMM_SIZE]++;
    return PMPI_Comm_size(comm, size);
}

int MPI_Pcontrol(const int level, ...)
{
    counts[C_PCONTROL]++;
    pcontrol_level = level;
    return PMPI_Pcontrol(level);
}
