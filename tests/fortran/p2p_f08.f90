! Point-to-point through mpi_f08: derived-type handles compared with == and /=,
! TYPE(MPI_Status) fields, optional IERROR, MPI_STATUS(ES)_IGNORE, nonblocking calls.
program p2p_f08
  use mpi_f08
  use testutil
  implicit none
  integer :: ierr, rank, nprocs, next, prev, i, count
  type(MPI_Status) :: status, statuses(2)
  type(MPI_Request) :: reqs(2)
  type(MPI_Comm) :: dup
  integer :: ibuf(6), ibuf2(6)
  double precision :: d, d2
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call check(ierr == MPI_SUCCESS, 'optional ierror present')
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)

  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call check(dup /= MPI_COMM_WORLD .and. .not. (dup == MPI_COMM_NULL), 'handle operators')
  ibuf = [(rank * 10 + i, i = 1, 6)]
  ibuf2 = -1
  call MPI_Irecv(ibuf2, 6, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, reqs(1))
  call MPI_Isend(ibuf, 5, MPI_INTEGER, next, 30 + rank, dup, reqs(2))
  call MPI_Waitall(2, reqs, statuses)
  call check(statuses(1)%MPI_SOURCE == prev .and. statuses(1)%MPI_TAG == 30 + prev, 'status fields')
  call MPI_Get_count(statuses(1), MPI_INTEGER, count)
  call check(count == 5, 'MPI_Get_count')
  call check(all(ibuf2(1:5) == [(prev * 10 + i, i = 1, 5)]) .and. ibuf2(6) == -1, 'data')
  call check(reqs(1) == MPI_REQUEST_NULL .and. reqs(2) == MPI_REQUEST_NULL, 'requests freed')

  d = rank + 0.5d0
  call MPI_Sendrecv(d, 1, MPI_DOUBLE_PRECISION, next, 1, d2, 1, MPI_DOUBLE_PRECISION, prev, 1, &
                    dup, MPI_STATUS_IGNORE)
  call check(d2 == prev + 0.5d0, 'MPI_Sendrecv')
  call MPI_Irecv(ibuf2, 1, MPI_INTEGER, prev, 2, dup, reqs(2))
  call MPI_Send(rank, 1, MPI_INTEGER, next, 2, dup)
  call MPI_Wait(reqs(2), status)
  call check(ibuf2(1) == prev .and. status%MPI_TAG == 2, 'MPI_Wait')
  call MPI_Isend(ibuf, 1, MPI_INTEGER, next, 3, dup, reqs(1))
  call MPI_Irecv(ibuf2, 1, MPI_INTEGER, prev, 3, dup, reqs(2))
  flag = .false.
  do while (.not. flag)
    call MPI_Testall(2, reqs, flag, MPI_STATUSES_IGNORE)
  end do
  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN)
  call MPI_Recv(ibuf2, 1, MPI_INTEGER, 0, -5, dup, status, ierr)
  call MPI_Error_class(ierr, i)
  call check(i == MPI_ERR_TAG, 'error in IERROR')
  call MPI_Comm_free(dup)
  call check(dup == MPI_COMM_NULL, 'MPI_Comm_free')

  call report()
  call MPI_Finalize()
end program p2p_f08
