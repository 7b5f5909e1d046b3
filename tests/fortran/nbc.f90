! Nonblocking and persistent collectives through the mpi module: a nonblocking
! reduction with a Fortran user operation (not commutative: the canonical order must
! hold), nonblocking broadcast, all-to-all and barrier completed together, a
! nonblocking neighbourhood gather on a periodic ring, and persistent collectives
! started more than once.
module nbc_ops
  implicit none
contains
  ! a (+) b = 10 * a + b on the digits of rank + 1: the result spells the order.
  subroutine concat(invec, inoutvec, len, datatype)
    integer :: len, datatype
    integer :: invec(len), inoutvec(len)
    integer :: i
    do i = 1, len
      inoutvec(i) = invec(i) * 10**digits(inoutvec(i)) + inoutvec(i)
    end do
  end subroutine concat

  integer function digits(v)
    integer, intent(in) :: v
    integer :: t
    digits = 1
    t = v
    do while (t >= 10)
      t = t / 10
      digits = digits + 1
    end do
  end function digits
end module nbc_ops

program nbc
  use mpi
  use testutil
  use nbc_ops
  implicit none
  integer :: ierr, rank, nprocs, i, expect, round
  integer :: op, ring, left, right
  integer :: reqs(4), preq(2)
  integer :: statuses(MPI_STATUS_SIZE, 4)
  ! Buffers of operations that complete in later calls (MPI-4.1 section 19.1.17).
  integer, asynchronous :: v, r, bval, nb(2), pin(1), pout(1), pb(3), srank
  integer, allocatable, asynchronous :: a2a(:), a2b(:)
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  allocate (a2a(nprocs), a2b(nprocs))

  ! Several nonblocking collectives in flight at once, completed by one MPI_Waitall.
  call MPI_Op_create(concat, .false., op, ierr)
  v = rank + 1
  r = -1
  call MPI_Iallreduce(v, r, 1, MPI_INTEGER, op, MPI_COMM_WORLD, reqs(1), ierr)
  bval = 0
  if (rank == nprocs - 1) bval = 4242
  call MPI_Ibcast(bval, 1, MPI_INTEGER, nprocs - 1, MPI_COMM_WORLD, reqs(2), ierr)
  a2a = [(rank * 100 + i, i = 0, nprocs - 1)]
  a2b = -1
  call MPI_Ialltoall(a2a, 1, MPI_INTEGER, a2b, 1, MPI_INTEGER, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Ibarrier(MPI_COMM_WORLD, reqs(4), ierr)
  call MPI_Waitall(4, reqs, statuses, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Waitall of collectives')
  call check(all(reqs == MPI_REQUEST_NULL), 'requests freed')
  expect = 0
  do i = 1, nprocs
    expect = expect * 10 + i
  end do
  call check(r == expect, 'MPI_Iallreduce with a Fortran user op')
  call check(bval == 4242, 'MPI_Ibcast')
  call check(all(a2b == [(i * 100 + rank, i = 0, nprocs - 1)]), 'MPI_Ialltoall')

  ! A nonblocking reduction to a root, tested to completion.
  call MPI_Ireduce(v, r, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, reqs(1), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(reqs(1), flag, MPI_STATUS_IGNORE, ierr)
  end do
  if (rank == 0) call check(r == nprocs * (nprocs + 1) / 2, 'MPI_Ireduce')

  ! The neighbourhood of a periodic ring.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, [nprocs], [.true.], .false., ring, ierr)
  call MPI_Cart_shift(ring, 0, 1, left, right, ierr)
  nb = -1
  srank = rank
  call MPI_Ineighbor_allgather(srank, 1, MPI_INTEGER, nb, 1, MPI_INTEGER, ring, reqs(1), ierr)
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
  call check(nb(1) == left .and. nb(2) == right, 'MPI_Ineighbor_allgather')

  ! Persistent collectives: the arguments bound once, each start a new operation.
  call MPI_Allreduce_init(pin, pout, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &
                          preq(1), ierr)
  call MPI_Bcast_init(pb, 3, MPI_INTEGER, 0, MPI_COMM_WORLD, MPI_INFO_NULL, preq(2), ierr)
  do round = 1, 3
    pin(1) = rank * round
    pout(1) = -1
    if (rank == 0) pb = [round, round * 2, round * 3]
    if (rank /= 0) pb = 0
    call MPI_Startall(2, preq, ierr)
    call MPI_Waitall(2, preq, MPI_STATUSES_IGNORE, ierr)
    call check(pout(1) == round * nprocs * (nprocs - 1) / 2, 'MPI_Allreduce_init')
    call check(all(pb == [round, round * 2, round * 3]), 'MPI_Bcast_init')
  end do
  call check(all(preq /= MPI_REQUEST_NULL), 'persistent requests stay')
  call MPI_Request_free(preq(1), ierr)
  call MPI_Request_free(preq(2), ierr)
  srank = rank
  call MPI_Neighbor_allgather_init(srank, 1, MPI_INTEGER, nb, 1, MPI_INTEGER, ring, &
                                   MPI_INFO_NULL, preq(1), ierr)
  nb = -1
  call MPI_Start(preq(1), ierr)
  call MPI_Wait(preq(1), MPI_STATUS_IGNORE, ierr)
  call check(nb(1) == left .and. nb(2) == right, 'MPI_Neighbor_allgather_init')
  call MPI_Request_free(preq(1), ierr)

  call MPI_Comm_free(ring, ierr)
  call MPI_Op_free(op, ierr)
  call report()
  call MPI_Finalize(ierr)
end program nbc
