! Nonblocking and persistent collectives through mpi_f08: MPI_Iallreduce with a user
! operation written in Fortran (mpi_f08's interface: TYPE(C_PTR) buffers by value), not
! commutative, so the canonical order must hold; MPI_Ibcast and MPI_Ibarrier completed by
! MPI_Waitall; MPI_Reduce_init started twice; a generalized request with Fortran
! callbacks.
module nbc_f08_ops
  use mpi_f08
  use testutil
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer :: frees = 0
contains
  ! a (+) b = 10 * a + b on one digit each side: the result spells the order.
  subroutine concat(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    integer :: i, d, t
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    do i = 1, len
      d = 1
      t = b(i)
      do while (t >= 10)
        t = t / 10
        d = d + 1
      end do
      b(i) = a(i) * 10**d + b(i)
    end do
  end subroutine concat

  subroutine query_fn(extra_state, status, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    type(MPI_Status) :: status
    integer :: ierror
    status%MPI_SOURCE = int(extra_state)
    status%MPI_TAG = 9
    status%MPI_ERROR = MPI_SUCCESS
    call MPI_Status_set_elements(status, MPI_INTEGER, 0)
    call MPI_Status_set_cancelled(status, .false.)
    ierror = MPI_SUCCESS
  end subroutine query_fn

  subroutine free_fn(extra_state, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierror
    frees = frees + 1
    ierror = MPI_SUCCESS
  end subroutine free_fn

  subroutine cancel_fn(extra_state, complete, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    logical :: complete
    integer :: ierror
    ierror = MPI_SUCCESS
  end subroutine cancel_fn
end module nbc_f08_ops

program nbc_f08
  use mpi_f08
  use nbc_f08_ops
  implicit none
  integer :: rank, nprocs, i, expect, round
  integer, asynchronous :: v, r, bval, pin, pout
  type(MPI_Op) :: op
  type(MPI_Request) :: reqs(3), preq, greq
  type(MPI_Status) :: st

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)

  call MPI_Op_create(concat, .false., op)
  v = rank + 1
  r = -1
  call MPI_Iallreduce(v, r, 1, MPI_INTEGER, op, MPI_COMM_WORLD, reqs(1))
  bval = merge(77, 0, rank == 0)
  call MPI_Ibcast(bval, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, reqs(2))
  call MPI_Ibarrier(MPI_COMM_WORLD, reqs(3))
  call MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE)
  expect = 0
  do i = 1, nprocs
    expect = expect * 10 + i
  end do
  call check(r == expect, 'MPI_Iallreduce with a Fortran user op')
  call check(bval == 77, 'MPI_Ibcast')
  call check(all(reqs == MPI_REQUEST_NULL), 'requests freed')

  call MPI_Reduce_init(pin, pout, 1, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, MPI_INFO_NULL, preq)
  do round = 1, 2
    pin = rank * round
    pout = -1
    call MPI_Start(preq)
    call MPI_Wait(preq, MPI_STATUS_IGNORE)
    if (rank == 0) call check(pout == (nprocs - 1) * round, 'MPI_Reduce_init')
  end do
  call MPI_Request_free(preq)
  call MPI_Op_free(op)

  call MPI_Grequest_start(query_fn, free_fn, cancel_fn, int(rank + 3, MPI_ADDRESS_KIND), greq)
  call MPI_Grequest_complete(greq)
  call MPI_Wait(greq, st)
  call check(st%MPI_SOURCE == rank + 3 .and. st%MPI_TAG == 9 .and. frees == 1, &
             'generalized request with Fortran callbacks')

  call report()
  call MPI_Finalize()
end program nbc_f08
