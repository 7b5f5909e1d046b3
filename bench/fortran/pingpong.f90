! 8-byte ping-pong between ranks 0 and 1 through the mpi module (MPI_SEND / MPI_RECV of
! one INTEGER(KIND=8)): half the average round trip, microseconds, printed by rank 0.
! pingpong.c is the same loop in C; bench/fortran/run compares the two.
program pingpong
  use mpi
  implicit none
  integer, parameter :: warmup = 1000
  integer :: ierr, rank, i, n
  integer(kind=8) :: sbuf, rbuf
  double precision :: t0, t
  character(len=32) :: arg

  n = 20000
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  sbuf = 7
  do i = 1, warmup + n
    if (i == warmup + 1) then
      call MPI_Barrier(MPI_COMM_WORLD, ierr)
      t0 = MPI_Wtime()
    end if
    if (rank == 0) then
      call MPI_Send(sbuf, 1, MPI_INTEGER8, 1, 1, MPI_COMM_WORLD, ierr)
      call MPI_Recv(rbuf, 1, MPI_INTEGER8, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    else if (rank == 1) then
      call MPI_Recv(rbuf, 1, MPI_INTEGER8, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call MPI_Send(sbuf, 1, MPI_INTEGER8, 0, 1, MPI_COMM_WORLD, ierr)
    end if
  end do
  t = MPI_Wtime() - t0
  if (rank == 0) print '(a, f10.3)', 'fortran 8 B latency (us): ', t / (2 * n) * 1d6
  call MPI_Finalize(ierr)
end program pingpong
