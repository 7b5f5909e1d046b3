! oxmpi's mpi module: MPI_SUBARRAYS_SUPPORTED is .TRUE., and noncontiguous array sections
! are the buffers of calls whose operation outlives them: the library describes each by a
! derived datatype over the section's own elements (no copy). Checked with values: MPI_Isend
! / MPI_Irecv of strided and reversed vector sections, 2-D sections of a matrix, a part
! of a section (count below its size), sections of an array of a derived type (a struct
! datatype) and of one of its components, MPI_Ibcast and MPI_Iallreduce (also in place)
! on sections, MPI_Ialltoall between strided sections and between 2-D sections (blocks
! of whole columns), a persistent send of a section started twice, MPI_Iallreduce and
! MPI_Iexscan between a contiguous array and a strided section (the input copied into
! recvbuf, taken in place); the gaps between the elements are left alone. What no
! datatype describes is refused with MPI_ERR_BUFFER, the request left alone: window
! memory (MPI_Win_create) and a rooted reduction whose two buffers are laid out
! differently.
! (MPICH's mpi module declares MPI_SUBARRAYS_SUPPORTED .FALSE.: mtest-abi: oxmpi-header.)
program subarray_strict
  use mpi
  use testutil
  implicit none
  type pt
    integer :: id
    real(kind=8) :: x
  end type pt
  integer :: rank, nprocs, next, prev, ierr, cls, req, reqs(2), win, i, j, ptype, tmp
  integer :: v(10), w(10), m(5, 6), r(5, 4), sa(16), ra(16)
  integer :: sts(MPI_STATUS_SIZE, 2), st(MPI_STATUS_SIZE)
  integer(kind=MPI_ADDRESS_KIND) :: a0, a1, disp(2)
  integer :: bl(2), tys(2)
  type(pt) :: p(8), q(8)
  real(kind=8) :: xs(8)
  integer :: mm(4, 8), ma(3, 10)
  logical :: ok

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)
  call check(MPI_SUBARRAYS_SUPPORTED, 'MPI_SUBARRAYS_SUPPORTED is .TRUE.')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  v = [(rank * 100 + i, i = 1, 10)]

  ! A strided section into a reversed one.
  w = -1
  call MPI_Irecv(w(10:1:-2), 5, MPI_INTEGER, prev, 1, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(v(1:10:2), 5, MPI_INTEGER, next, 1, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, sts, ierr)
  call check(ierr == MPI_SUCCESS .and. all(w(10:1:-2) == [(prev * 100 + i, i = 1, 10, 2)]) &
             .and. all(w(9:1:-2) == -1), 'MPI_Isend / MPI_Irecv: strided into reversed')
  call MPI_Get_count(sts(:, 1), MPI_INTEGER, i, ierr)
  call check(i == 5, 'MPI_Irecv into a section: MPI_Get_count')

  ! 2-D sections: rows 2..4 of every other column, into every other row of 3 columns.
  m = reshape([(rank * 1000 + i, i = 1, 30)], [5, 6])
  r = -1
  call MPI_Irecv(r(1:5:2, 2:4), 9, MPI_INTEGER, prev, 2, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(m(2:4, 1:6:2), 9, MPI_INTEGER, next, 2, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, sts, ierr)
  m = reshape([(prev * 1000 + i, i = 1, 30)], [5, 6])
  call check(ierr == MPI_SUCCESS .and. all(r(1:5:2, 2:4) == m(2:4, 1:6:2)) .and. &
             all(r(2:4:2, :) == -1) .and. all(r(:, 1) == -1), 'MPI_Isend / MPI_Irecv: 2-D sections')

  ! A part of a section: 3 of its 5 elements.
  w = -1
  call MPI_Irecv(w(2:10:2), 3, MPI_INTEGER, prev, 3, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(v(1:10:2), 3, MPI_INTEGER, next, 3, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, sts, ierr)
  call check(ierr == MPI_SUCCESS .and. all(w(2:6:2) == [(prev * 100 + i, i = 1, 5, 2)]) .and. &
             all(w(8:10:2) == -1) .and. all(w(1:9:2) == -1), 'a count below the section''s size')

  ! Sections of an array of a derived type (a struct datatype of its storage size) and of
  ! one of its components.
  call MPI_Get_address(p(1)%id, a0, ierr)
  call MPI_Get_address(p(1)%x, a1, ierr)
  disp = [0_MPI_ADDRESS_KIND, a1 - a0]
  bl = 1
  tys = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  call MPI_Type_create_struct(2, bl, disp, tys, tmp, ierr)
  call MPI_Get_address(p(2)%id, a1, ierr)
  call MPI_Type_create_resized(tmp, 0_MPI_ADDRESS_KIND, a1 - a0, ptype, ierr)
  call MPI_Type_free(tmp, ierr)
  call MPI_Type_commit(ptype, ierr)
  do i = 1, 8
    p(i) = pt(rank * 10 + i, rank + i / 4.0d0)
    q(i) = pt(-1, -1.0d0)
  end do
  xs = -1
  call MPI_Irecv(q(8:1:-2), 4, ptype, prev, 4, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(p(1:8:2), 4, ptype, next, 4, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, sts, ierr)
  call check(ierr == MPI_SUCCESS .and. all(q(8:1:-2)%id == [(prev * 10 + i, i = 1, 8, 2)]) &
             .and. all(q(8:1:-2)%x == [(prev + i / 4.0d0, i = 1, 8, 2)]) .and. &
             all(q(7:1:-2)%id == -1), 'sections of a derived-type array (struct datatype)')
  call MPI_Irecv(xs(1:8:2), 4, MPI_DOUBLE_PRECISION, prev, 5, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(p(2:8:2)%x, 4, MPI_DOUBLE_PRECISION, next, 5, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, sts, ierr)
  call check(ierr == MPI_SUCCESS .and. all(xs(1:8:2) == [(prev + i / 4.0d0, i = 2, 8, 2)]) &
             .and. all(xs(2:8:2) == -1), 'a section of a component of a derived-type array')
  call MPI_Type_free(ptype, ierr)

  ! MPI_Ibcast on a section.
  w = -1
  if (rank == 0) w(1:10:3) = [7, 8, 9, 10]
  call MPI_Ibcast(w(1:10:3), 4, MPI_INTEGER, 0, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, st, ierr)
  call check(ierr == MPI_SUCCESS .and. all(w(1:10:3) == [7, 8, 9, 10]) .and. &
             all(w([2, 3, 5, 6, 8, 9]) == -1), 'MPI_Ibcast on a strided section')

  ! MPI_Iallreduce between sections of one layout, then in place on a 2-D section.
  w = -1
  call MPI_Iallreduce(v(1:7:2), w(2:8:2), 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, st, ierr)
  call check(ierr == MPI_SUCCESS .and. &
             all(w(2:8:2) == [(nprocs * i + 100 * nprocs * (nprocs - 1) / 2, i = 1, 7, 2)]) &
             .and. all(w(1:9:2) == -1), 'MPI_Iallreduce between strided sections')
  m = 1
  m(1:5:2, 2:6:2) = rank
  call MPI_Iallreduce(MPI_IN_PLACE, m(1:5:2, 2:6:2), 9, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, &
                      req, ierr)
  call MPI_Wait(req, st, ierr)
  call check(ierr == MPI_SUCCESS .and. all(m(1:5:2, 2:6:2) == nprocs - 1) .and. &
             all(m(2:4:2, :) == 1) .and. all(m(:, 1:5:2) == 1), 'MPI_Iallreduce in place on a 2-D section')

  ! MPI_Ialltoall between strided sections (one element per process).
  sa = -1
  ra = -1
  sa(1:2 * nprocs:2) = [(rank * 10 + i, i = 0, nprocs - 1)]
  call MPI_Ialltoall(sa(1:2 * nprocs:2), 1, MPI_INTEGER, ra(2:2 * nprocs:2), 1, MPI_INTEGER, &
                     MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, st, ierr)
  call check(ierr == MPI_SUCCESS .and. all(ra(2:2 * nprocs:2) == [(i * 10 + rank, i = 0, nprocs - 1)]) &
             .and. all(ra(1:2 * nprocs:2) == -1), 'MPI_Ialltoall between strided sections')

  ! A persistent send of a section, started twice (its datatype freed by the library
  ! when MPI_Send_init returned).
  call MPI_Send_init(v(2:10:4), 3, MPI_INTEGER, next, 6, MPI_COMM_WORLD, req, ierr)
  do j = 1, 2
    w = -1
    call MPI_Start(req, ierr)
    call MPI_Recv(w(1:3), 3, MPI_INTEGER, prev, 6, MPI_COMM_WORLD, st, ierr)
    call MPI_Wait(req, st, ierr)
    call check(ierr == MPI_SUCCESS .and. &
               all(w(1:3) == [(prev * 100 + 1000 * (j - 1) + i, i = 2, 10, 4)]), &
               'MPI_Send_init of a strided section, started')
    v = v + 1000
  end do
  call MPI_Request_free(req, ierr)

  ! 2-D sections divided among the processes in blocks of whole columns (process i's:
  ! columns 2i+1 and 2i+2 of the section's rows).
  mm = -1
  do j = 1, 2 * nprocs
    mm(1:2, j) = [rank * 1000 + 100 + j, rank * 1000 + 200 + j]
  end do
  ma = -1
  call MPI_Ialltoall(mm(1:2, 1:2 * nprocs), 4, MPI_INTEGER, ma(1:3:2, 1:2 * nprocs), 4, &
                     MPI_INTEGER, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, st, ierr)
  ok = ierr == MPI_SUCCESS .and. all(ma(2, :) == -1) .and. all(ma(:, 2 * nprocs + 1:) == -1)
  do i = 0, nprocs - 1
    do j = 1, 2
      ok = ok .and. ma(1, 2 * i + j) == i * 1000 + 100 + 2 * rank + j .and. &
           ma(3, 2 * i + j) == i * 1000 + 200 + 2 * rank + j
    end do
  end do
  call check(ok, 'MPI_Ialltoall between 2-D sections (blocks of whole columns)')

  ! Buffers of one datatype laid out differently: the input is copied into recvbuf,
  ! which the reduction takes in place.
  v = [(rank * 100 + i, i = 1, 10)]
  w = -1
  call MPI_Iallreduce(v(1:4), w(1:7:2), 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, st, ierr)
  call check(ierr == MPI_SUCCESS .and. &
             all(w(1:7:2) == [(100 * nprocs * (nprocs - 1) / 2 + nprocs * i, i = 1, 4)]) .and. &
             all(w(2:10:2) == -1) .and. w(9) == -1, &
             'MPI_Iallreduce, contiguous into a strided section')
  w = -1
  call MPI_Iexscan(v(1:7:2), w(1:4), 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, st, ierr)
  call check(ierr == MPI_SUCCESS .and. all(w(5:10) == -1) .and. (rank == 0 .or. &
             all(w(1:4) == [(100 * rank * (rank - 1) / 2 + rank * (2 * i - 1), i = 1, 4)])), &
             'MPI_Iexscan, a strided section into a contiguous array')

  ! Refused: window memory must be contiguous; a rooted reduction's buffers must share
  ! their layout.
  call MPI_Win_create(v(1:10:2), 20_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &
                      win, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_BUFFER, 'MPI_Win_create of a strided section: MPI_ERR_BUFFER')
  req = MPI_REQUEST_NULL
  call MPI_Ireduce(v(1:4), w(1:7:2), 4, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, req, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_BUFFER .and. req == MPI_REQUEST_NULL, &
             'MPI_Ireduce, contiguous into strided: MPI_ERR_BUFFER')

  call report()
  call MPI_Finalize(ierr)
end program subarray_strict
