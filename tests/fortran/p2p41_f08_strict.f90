! MPI-4 point-to-point through mpi_f08: MPI_Isendrecv and MPI_Isendrecv_replace around
! a ring, MPI_Request_get_status_any/all/some (which leave requests alone), the status
! accessors and conversions, and a communicator's own buffer for buffered sends. _strict: MPICH 4.0.2
! lacks the MPI-4.1 calls (MPI_Request_get_status_any/all/some, MPI_Status_get_*/set_*,
! MPI_Comm_attach_buffer and the rest).
! mtest-abi: oxmpi-header (MPICH's Fortran library cannot link it)
program p2p41_f08_strict
  use mpi_f08
  use testutil
  implicit none
  integer :: rank, nprocs, next, prev, v, w, idx, outcount, i, src, tag, err, sz
  integer :: ixs(2)
  integer :: sbuf(3), rbuf(3)
  integer, allocatable :: bbuf(:)
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: st, sts(2), st2
  integer :: fst(MPI_STATUS_SIZE)
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)

  sbuf = [rank, rank + 1, rank + 2]
  rbuf = -1
  call MPI_Isendrecv(sbuf, 3, MPI_INTEGER, next, 7, rbuf, 3, MPI_INTEGER, prev, 7, &
                     MPI_COMM_WORLD, reqs(1))
  call MPI_Wait(reqs(1), st)
  call check(all(rbuf == [prev, prev + 1, prev + 2]), 'MPI_Isendrecv data')
  call check(st%MPI_SOURCE == prev .and. st%MPI_TAG == 7, 'MPI_Isendrecv status')
  call MPI_Status_get_source(st, src)
  call MPI_Status_get_tag(st, tag)
  call check(src == prev .and. tag == 7, 'MPI_Status_get_source/tag')

  v = rank * 3
  call MPI_Isendrecv_replace(v, 1, MPI_INTEGER, next, 8, prev, 8, MPI_COMM_WORLD, reqs(1))
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
  call check(v == prev * 3, 'MPI_Isendrecv_replace')

  ! Inspect without completing: the requests stay active until MPI_Waitall.
  call MPI_Irecv(w, 1, MPI_INTEGER, prev, 9, MPI_COMM_WORLD, reqs(1))
  call MPI_Request_get_status_any(1, reqs, idx, flag, st)
  call check(.not. flag .or. idx == 1, 'MPI_Request_get_status_any before the send')
  call MPI_Isend(rank, 1, MPI_INTEGER, next, 9, MPI_COMM_WORLD, reqs(2))
  flag = .false.
  do while (.not. flag)
    call MPI_Request_get_status_all(2, reqs, flag, sts)
  end do
  call check(sts(1)%MPI_SOURCE == prev .and. sts(1)%MPI_TAG == 9, 'MPI_Request_get_status_all')
  call check(reqs(1) /= MPI_REQUEST_NULL .and. reqs(2) /= MPI_REQUEST_NULL, 'requests kept')
  call MPI_Request_get_status_some(2, reqs, outcount, ixs, sts)
  call check(outcount == 2 .and. minval(ixs) == 1 .and. maxval(ixs) == 2, &
             'MPI_Request_get_status_some indices from 1')
  call MPI_Request_get_status_any(2, reqs, idx, flag, st)
  call check(flag .and. (idx == 1 .or. idx == 2), 'MPI_Request_get_status_any index from 1')
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  call check(w == prev, 'data after MPI_Request_get_status_*')

  ! Setting status fields.
  call MPI_Status_set_source(st, 5)
  call MPI_Status_set_tag(st, 6)
  call MPI_Status_set_error(st, MPI_ERR_TAG)
  call MPI_Status_get_error(st, err)
  call check(st%MPI_SOURCE == 5 .and. st%MPI_TAG == 6 .and. err == MPI_ERR_TAG, 'MPI_Status_set_*')

  ! The two Fortran forms of a status.
  call MPI_Status_f082f(st, fst)
  call check(fst(MPI_SOURCE) == 5 .and. fst(MPI_TAG) == 6 .and. fst(MPI_ERROR) == MPI_ERR_TAG, &
             'MPI_Status_f082f')
  fst(MPI_TAG) = 60
  call MPI_Status_f2f08(fst, st2)
  call check(st2%MPI_SOURCE == 5 .and. st2%MPI_TAG == 60, 'MPI_Status_f2f08')

  ! A buffer for this communicator only.
  sz = 4 * (MPI_BSEND_OVERHEAD + 16)
  allocate (bbuf(sz / 4))
  call MPI_Comm_attach_buffer(MPI_COMM_WORLD, bbuf, sz)
  do i = 1, 3
    call MPI_Bsend(rank * 10 + i, 1, MPI_INTEGER, next, 10 + i, MPI_COMM_WORLD)
  end do
  do i = 1, 3
    call MPI_Recv(w, 1, MPI_INTEGER, prev, 10 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call check(w == prev * 10 + i, 'MPI_Bsend through the communicator buffer')
  end do
  call MPI_Comm_flush_buffer(MPI_COMM_WORLD)
  call MPI_Comm_detach_buffer(MPI_COMM_WORLD, bbuf, sz)
  call check(sz == 4 * (MPI_BSEND_OVERHEAD + 16), 'MPI_Comm_detach_buffer size')

  call report()
  call MPI_Finalize()
end program p2p41_f08_strict
