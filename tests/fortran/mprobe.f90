! Matched probe and partitioned communication through the mpi module, around a ring:
! MPI_MPROBE / MPI_MRECV and MPI_IMPROBE / MPI_IMRECV (status fields, message handles
! set to MPI_MESSAGE_NULL), MPI_PSEND_INIT / MPI_PRECV_INIT (partition counts
! INTEGER(KIND=MPI_COUNT_KIND)), MPI_PREADY, MPI_PREADY_RANGE, MPI_PREADY_LIST
! (MPI_PARRIVED is in large_f08: MPICH 4.0.2's mpi module declares its flag INTEGER).
program mprobe
  use mpi
  use testutil
  implicit none
  integer, parameter :: parts = 4, per = 3
  integer :: ierr, rank, nprocs, next, prev, msg, n, i, sreq, rreq
  integer :: st(MPI_STATUS_SIZE), v(5), w(5), list(2)
  integer :: sbuf(parts * per), rbuf(parts * per)
  integer(kind=MPI_COUNT_KIND) :: cnt
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)

  ! Blocking matched probe.
  v = [(rank * 10 + i, i = 1, 5)]
  call MPI_Isend(v, 5, MPI_INTEGER, next, 7, MPI_COMM_WORLD, sreq, ierr)
  call MPI_Mprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, msg, st, ierr)
  call check(ierr == MPI_SUCCESS .and. msg /= MPI_MESSAGE_NULL, 'MPI_MPROBE')
  call check(st(MPI_SOURCE) == prev .and. st(MPI_TAG) == 7, 'MPI_MPROBE status')
  call MPI_Get_count(st, MPI_INTEGER, n, ierr)
  call check(n == 5, 'MPI_GET_COUNT after MPI_MPROBE')
  w = -1
  call MPI_Mrecv(w, 5, MPI_INTEGER, msg, st, ierr)
  call check(ierr == MPI_SUCCESS .and. msg == MPI_MESSAGE_NULL, 'MPI_MRECV')
  call check(all(w == [(prev * 10 + i, i = 1, 5)]), 'MPI_MRECV data')
  call MPI_Wait(sreq, MPI_STATUS_IGNORE, ierr)

  ! Nonblocking matched probe.
  call MPI_Isend(v, 3, MPI_INTEGER, next, 8, MPI_COMM_WORLD, sreq, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Improbe(prev, 8, MPI_COMM_WORLD, flag, msg, st, ierr)
  end do
  call check(st(MPI_SOURCE) == prev, 'MPI_IMPROBE status')
  w = -1
  call MPI_Imrecv(w, 5, MPI_INTEGER, msg, rreq, ierr)
  call check(msg == MPI_MESSAGE_NULL, 'MPI_IMRECV message handle')
  call MPI_Wait(rreq, st, ierr)
  call MPI_Get_count(st, MPI_INTEGER, n, ierr)
  call check(n == 3 .and. all(w(1:3) == [(prev * 10 + i, i = 1, 3)]) .and. w(4) == -1, &
             'MPI_IMRECV data')
  call MPI_Wait(sreq, MPI_STATUS_IGNORE, ierr)

  ! Partitioned: 4 partitions of 3 INTEGERs, made ready one by one, as a range and as
  ! a list.
  cnt = per
  sbuf = [(rank * 100 + i, i = 1, parts * per)]
  rbuf = -1
  call MPI_Precv_init(rbuf, parts, cnt, MPI_INTEGER, prev, 9, MPI_COMM_WORLD, &
                      MPI_INFO_NULL, rreq, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_PRECV_INIT')
  call MPI_Psend_init(sbuf, parts, cnt, MPI_INTEGER, next, 9, MPI_COMM_WORLD, &
                      MPI_INFO_NULL, sreq, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_PSEND_INIT')
  call MPI_Start(rreq, ierr)
  call MPI_Start(sreq, ierr)
  call MPI_Pready(0, sreq, ierr)
  call MPI_Pready_range(1, 1, sreq, ierr)
  list = [3, 2]
  call MPI_Pready_list(2, list, sreq, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_PREADY_LIST')
  call MPI_Wait(sreq, MPI_STATUS_IGNORE, ierr)
  call MPI_Wait(rreq, MPI_STATUS_IGNORE, ierr)
  call check(all(rbuf == [(prev * 100 + i, i = 1, parts * per)]), 'partitioned data')
  call MPI_Request_free(sreq, ierr)
  call MPI_Request_free(rreq, ierr)

  call report()
  call MPI_Finalize(ierr)
end program mprobe
