/* Compile-only use of most of mpi.h's vocabulary: check.sh builds this with
 * strict warnings as C99, C11 and C++ to prove the header is clean. It is
 * never linked or run. */
#include <mpi.h>
#include <mpi.h> /* the include guard must make a second inclusion harmless */
#include <mpio.h>
#include <stddef.h>

static void sum_pairs(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int i;
    const int *a = (const int *)in;
    int *b = (int *)inout;
    (void)type;
    for (i = 0; i < *len; i++)
        b[i] += a[i];
}

static int copy_attr(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm; (void)keyval; (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static void on_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm; (void)code;
}

int sample(int argc, char **argv);
int sample(int argc, char **argv)
{
    int rank = 0, size = 0, provided = 0, flag = 0, keyval = MPI_KEYVAL_INVALID, count = 0;
    int data[4] = {0, 1, 2, 3};
    char name[MPI_MAX_PROCESSOR_NAME];
    char err[MPI_MAX_ERROR_STRING];
    MPI_Status status, statuses[2];
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int indices[2] = {0, 0};
    MPI_Op op = MPI_OP_NULL;
    MPI_Datatype vec = MPI_DATATYPE_NULL;
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_Aint lb = 0, extent = 0;
    MPI_Count big = 0;
    MPI_Offset off = 0;
    MPI_File fh = MPI_FILE_NULL;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Fint fstatus[MPI_F_STATUS_SIZE];
    double t0 = MPI_Wtime();

    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &count);
    MPI_Isend(data, 4, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(data, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, statuses);
    MPI_Get_count(&statuses[1], MPI_INT, &count);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE);
    MPI_Waitsome(2, reqs, &count, indices, MPI_STATUSES_IGNORE);
    MPI_Testsome(2, reqs, &count, indices, MPI_STATUSES_IGNORE);
    MPI_Sendrecv(data, 1, MPI_2INT, MPI_PROC_NULL, 0, data, 1, MPI_2INT, MPI_PROC_NULL, 0,
                 MPI_COMM_SELF, MPI_STATUS_IGNORE);
    MPI_Op_create(sum_pairs, 1, &op);
    MPI_Allreduce(MPI_IN_PLACE, data, 4, MPI_INT, op, MPI_COMM_WORLD);
    MPI_Reduce(data, MPI_BOTTOM, 2, MPI_DOUBLE_INT, MPI_MAXLOC, 0, MPI_COMM_WORLD);
    MPI_Op_free(&op);
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_get_extent(vec, &lb, &extent);
    MPI_Type_size_c(vec, &big);
    MPI_Type_free(&vec);
    MPI_Comm_create_keyval(copy_attr, MPI_COMM_NULL_DELETE_FN, &keyval, NULL);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &keyval, NULL);
    MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &keyval, NULL);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_create_errhandler(on_error, &eh);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &flag, &flag);
    MPI_Error_string(MPI_ERR_RANK, err, &count);
    MPI_Comm_free(&dup);
    MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &status);
    MPI_Mrecv(data, 0, MPI_INT, &msg, MPI_STATUS_IGNORE);
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0, NULL,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dup);
    MPI_File_open(MPI_COMM_WORLD, "f", MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    MPI_File_seek(fh, off, MPI_SEEK_SET);
    MPI_File_close(&fh);
    MPI_Status_c2f(&status, fstatus);
    MPI_Comm_spawn("x", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &dup,
                   MPI_ERRCODES_IGNORE);
    (void)MPI_Comm_c2f(MPI_COMM_WORLD);
    (void)MPI_Type_f2c(MPI_Type_c2f(MPI_INT));
    (void)status.MPI_SOURCE; (void)status.MPI_TAG; (void)status.MPI_ERROR;
    (void)t0;
    if (MPI_VERSION < 3 || OXMPI != 1)
        MPI_Abort(MPI_COMM_WORLD, 1);
    return PMPI_Finalize();
}
