/* The C half of c2f.f90: converts the Fortran handles and status it is given. */
#include <mpi.h>
#include <stdio.h>

#define CHECK(cond, what)                                              \
    do {                                                               \
        if (!(cond)) {                                                 \
            fprintf(stderr, "c_check: check failed: %s\n", what);      \
            ++*errs;                                                   \
        }                                                              \
    } while (0)

void c_check(MPI_Fint *fcomm, MPI_Fint *ftype, MPI_Fint *fop, MPI_Fint *fgroup,
             MPI_Fint *fstatus, MPI_Fint *fnewcomm, MPI_Fint *fcstatus, MPI_Fint *errs)
{
    MPI_Comm comm = MPI_Comm_f2c(*fcomm);
    MPI_Datatype type = MPI_Type_f2c(*ftype);
    MPI_Op op = MPI_Op_f2c(*fop);
    MPI_Group group = MPI_Group_f2c(*fgroup);
    MPI_Status st;
    int rank, size, gsize, tsize, count;

    CHECK(comm == MPI_COMM_WORLD, "MPI_Comm_f2c");
    CHECK(type == MPI_DOUBLE_PRECISION, "MPI_Type_f2c");
    CHECK(op == MPI_MAXLOC, "MPI_Op_f2c");
    CHECK(MPI_Comm_c2f(comm) == *fcomm, "MPI_Comm_c2f");
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Group_size(group, &gsize);
    CHECK(gsize == size, "the group from Fortran");
    MPI_Type_size(type, &tsize);
    CHECK(tsize == 8, "MPI_DOUBLE_PRECISION's size");

    /* The status of a receive of one INTEGER from this rank with tag 7. */
    CHECK(MPI_Status_f2c(fstatus, &st) == MPI_SUCCESS, "MPI_Status_f2c");
    CHECK(st.MPI_SOURCE == rank && st.MPI_TAG == 7, "the status's fields");
    MPI_Get_count(&st, MPI_INTEGER, &count);
    CHECK(count == 1, "the status's count");

    MPI_Comm dup;
    MPI_Comm_dup(comm, &dup);
    *fnewcomm = MPI_Comm_c2f(dup);
    st.MPI_SOURCE = 3;
    st.MPI_TAG = 4;
    st.MPI_ERROR = 5;
    CHECK(MPI_Status_c2f(&st, fcstatus) == MPI_SUCCESS, "MPI_Status_c2f");
}

void c_ignores(MPI_Fint *status, MPI_Fint *statuses, MPI_Fint *errs)
{
    CHECK(status == MPI_F_STATUS_IGNORE, "MPI_STATUS_IGNORE is MPI_F_STATUS_IGNORE");
    CHECK(statuses == MPI_F_STATUSES_IGNORE, "MPI_STATUSES_IGNORE is MPI_F_STATUSES_IGNORE");
}
