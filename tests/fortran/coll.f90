! Collectives through the mpi module with Fortran datatypes: reductions on INTEGER,
! REAL, DOUBLE PRECISION and COMPLEX, logical operations on LOGICAL, MAXLOC on
! MPI_2DOUBLE_PRECISION and MINLOC on MPI_2INTEGER, MPI_IN_PLACE, a user operation
! written in Fortran (MPI_Op_create), gathers, scatters, alltoall and scan.
module userops
  implicit none
contains
  ! The decimal digits of invec(i) followed by those of inoutvec(i): associative but
  ! not commutative, so the order of application shows in the result.
  subroutine concat(invec, inoutvec, len, datatype)
    integer :: len, datatype
    integer :: invec(len), inoutvec(len)
    integer :: i, scale
    do i = 1, len
      scale = 10
      do while (scale <= inoutvec(i))
        scale = scale * 10
      end do
      inoutvec(i) = invec(i) * scale + inoutvec(i)
    end do
  end subroutine concat
end module userops

program coll
  use mpi
  use testutil
  use userops
  implicit none
  integer :: ierr, rank, nprocs, i, op, expect
  integer :: ivals(3), ires(3)
  real :: rval, rres
  double precision :: dval, dres, dpair(2, 2), dpres(2, 2)
  complex :: cval, cres
  logical :: lval, land, lor, lxor, commute
  integer :: ipair(2), ipres(2)
  integer, allocatable :: gath(:), counts(:), displs(:), a2a(:), a2b(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  ivals = [rank, rank * 2, -rank]
  call MPI_Allreduce(ivals, ires, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  expect = nprocs * (nprocs - 1) / 2
  call check(all(ires == [expect, 2 * expect, -expect]), 'INTEGER SUM')
  call MPI_Allreduce(ivals, ires, 3, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(all(ires == [nprocs - 1, 2 * (nprocs - 1), 0]), 'INTEGER MAX')
  rval = 0.5 * (rank + 1)
  call MPI_Reduce(rval, rres, 1, MPI_REAL, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(rres == 0.25 * nprocs * (nprocs + 1), 'REAL SUM')
  dval = rank + 1
  call MPI_Allreduce(dval, dres, 1, MPI_DOUBLE_PRECISION, MPI_PROD, MPI_COMM_WORLD, ierr)
  expect = 1
  do i = 2, nprocs
    expect = expect * i
  end do
  call check(dres == expect, 'DOUBLE PRECISION PROD')
  cval = cmplx(rank, 1)
  call MPI_Allreduce(cval, cres, 1, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(cres == cmplx(nprocs * (nprocs - 1) / 2, nprocs), 'COMPLEX SUM')

  ! Logical operations on LOGICAL.
  lval = rank == 0
  call MPI_Allreduce(lval, land, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(lval, lor, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(lval, lxor, 1, MPI_LOGICAL, MPI_LXOR, MPI_COMM_WORLD, ierr)
  call check(land .eqv. (nprocs == 1), 'LOGICAL LAND')
  call check(lor, 'LOGICAL LOR')
  call check(lxor, 'LOGICAL LXOR')

  ! MAXLOC / MINLOC on pairs.
  dpair(:, 1) = [dble(mod(rank * 7, nprocs + 1)), dble(rank)]
  dpair(:, 2) = [dble(-rank), dble(rank)]
  call MPI_Allreduce(dpair, dpres, 2, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  call check(dpres(1, 2) == 0d0 .and. dpres(2, 2) == 0d0, 'MAXLOC 2DOUBLE_PRECISION')
  expect = 0
  do i = 0, nprocs - 1
    if (mod(i * 7, nprocs + 1) > mod(expect * 7, nprocs + 1)) expect = i
  end do
  call check(dpres(2, 1) == expect, 'MAXLOC location')
  ipair = [rank + 10, rank]
  call MPI_Allreduce(ipair, ipres, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD, ierr)
  call check(ipres(1) == 10 .and. ipres(2) == 0, 'MINLOC 2INTEGER')

  ! MPI_IN_PLACE.
  ivals = [1, rank, 3]
  call MPI_Allreduce(MPI_IN_PLACE, ivals, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(all(ivals == [nprocs, nprocs * (nprocs - 1) / 2, 3 * nprocs]), 'IN_PLACE allreduce')

  ! A user operation written in Fortran, not commutative: canonical order.
  call MPI_Op_create(concat, .false., op, ierr)
  call MPI_Op_commutative(op, commute, ierr)
  call check(.not. commute, 'MPI_Op_commutative')
  ivals(1) = rank + 1
  call MPI_Reduce(ivals, ires, 1, MPI_INTEGER, op, 0, MPI_COMM_WORLD, ierr)
  ! The digits 1..n in rank order, read as a number (n < 10).
  expect = 0
  do i = 1, nprocs
    expect = expect * 10 + i
  end do
  if (rank == 0) call check(ires(1) == expect, 'Fortran user op')
  call MPI_Op_free(op, ierr)
  call check(op == MPI_OP_NULL, 'MPI_Op_free')

  ! Gathers and scatters.
  allocate (gath(nprocs), counts(nprocs), displs(nprocs), a2a(nprocs), a2b(nprocs))
  call MPI_Gather(rank * 3, 1, MPI_INTEGER, gath, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(all(gath == [(i * 3, i = 0, nprocs - 1)]), 'MPI_Gather')
  counts = 1
  displs = [(nprocs - 1 - i, i = 0, nprocs - 1)]
  gath = -1
  call MPI_Allgatherv(rank, 1, MPI_INTEGER, gath, counts, displs, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all(gath == [(nprocs - 1 - i, i = 0, nprocs - 1)]), 'MPI_Allgatherv')
  if (rank == 0) gath = [(i * i, i = 0, nprocs - 1)]
  call MPI_Scatter(gath, 1, MPI_INTEGER, i, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call check(i == rank * rank, 'MPI_Scatter')
  a2a = [(rank * 100 + i, i = 0, nprocs - 1)]
  call MPI_Alltoall(a2a, 1, MPI_INTEGER, a2b, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all(a2b == [(i * 100 + rank, i = 0, nprocs - 1)]), 'MPI_Alltoall')
  call MPI_Bcast(a2a, nprocs, MPI_INTEGER, nprocs - 1, MPI_COMM_WORLD, ierr)
  call check(all(a2a == [((nprocs - 1) * 100 + i, i = 0, nprocs - 1)]), 'MPI_Bcast')
  call MPI_Scan(rank + 1, i, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(i == (rank + 1) * (rank + 2) / 2, 'MPI_Scan')

  call report()
  call MPI_Finalize(ierr)
end program coll
