! Datatype queries and packing through the mpi module: MPI_Type_size_x,
! MPI_Type_get_extent(_x), MPI_Get_elements(_x), MPI_Status_set_elements,
! MPI_Status_set_cancelled with MPI_Test_cancelled, MPI_Pack / MPI_Unpack and the
! external32 calls (a CHARACTER datarep), MPI_Type_get_envelope / get_contents.
program types
  use mpi
  use testutil
  implicit none
  integer :: ierr, rank, vec, count, pos, psize, ni, na, nd, comb
  integer :: ints(4), dts(2), ibuf(6), ibuf2(6)
  integer(kind=MPI_ADDRESS_KIND) :: lb, ext, xpos, xsize, addrs(2)
  integer(kind=MPI_COUNT_KIND) :: csize, clb, cext, celems
  integer :: status(MPI_STATUS_SIZE)
  logical :: flag
  character :: packed(64), xpacked(64)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)

  call MPI_Type_vector(3, 2, 4, MPI_INTEGER, vec, ierr)
  call MPI_Type_commit(vec, ierr)
  call MPI_Type_size_x(vec, csize, ierr)
  call check(csize == 24, 'MPI_Type_size_x')
  call MPI_Type_get_extent(vec, lb, ext, ierr)
  call check(lb == 0 .and. ext == 40, 'MPI_Type_get_extent')
  call MPI_Type_get_extent_x(vec, clb, cext, ierr)
  call check(clb == 0 .and. cext == 40, 'MPI_Type_get_extent_x')
  call MPI_Type_get_envelope(vec, ni, na, nd, comb, ierr)
  call check(comb == MPI_COMBINER_VECTOR .and. ni == 3 .and. na == 0 .and. nd == 1, 'envelope')
  call MPI_Type_get_contents(vec, 4, 2, 2, ints, addrs, dts, ierr)
  call check(all(ints(1:3) == [3, 2, 4]) .and. dts(1) == MPI_INTEGER, 'contents')

  call MPI_Status_set_elements(status, MPI_INTEGER, 5, ierr)
  call MPI_Get_elements(status, MPI_INTEGER, count, ierr)
  call check(count == 5, 'MPI_Status_set_elements')
  call MPI_Get_elements_x(status, MPI_INTEGER, celems, ierr)
  call check(celems == 5, 'MPI_Get_elements_x')
  call MPI_Get_elements(status, vec, count, ierr)
  call check(count == 5, 'MPI_Get_elements of a vector')
  call MPI_Get_count(status, vec, count, ierr)
  call check(count == MPI_UNDEFINED, 'MPI_Get_count of a partial vector')
  csize = 12
  call MPI_Status_set_elements_x(status, MPI_INTEGER, csize, ierr)
  call MPI_Get_count(status, vec, count, ierr)
  call check(count == 2, 'MPI_Status_set_elements_x')
  call MPI_Status_set_cancelled(status, .true., ierr)
  call MPI_Test_cancelled(status, flag, ierr)
  call check(flag, 'MPI_Status_set_cancelled true')
  call MPI_Status_set_cancelled(status, .false., ierr)
  call MPI_Test_cancelled(status, flag, ierr)
  call check(.not. flag, 'MPI_Status_set_cancelled false')

  ! MPI_Pack / MPI_Unpack.
  ibuf = [1, 2, 3, 4, 5, 6]
  pos = 0
  call MPI_Pack(ibuf, 6, MPI_INTEGER, packed, 64, pos, MPI_COMM_WORLD, ierr)
  call MPI_Pack_size(6, MPI_INTEGER, MPI_COMM_WORLD, psize, ierr)
  call check(pos == 24 .and. psize >= 24, 'MPI_Pack')
  ibuf2 = 0
  pos = 0
  call MPI_Unpack(packed, 64, pos, ibuf2, 6, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all(ibuf2 == ibuf) .and. pos == 24, 'MPI_Unpack')

  ! external32 is big-endian.
  call MPI_Pack_external_size('external32', 2, MPI_INTEGER, xsize, ierr)
  call check(xsize == 8, 'MPI_Pack_external_size')
  xpos = 0
  call MPI_Pack_external('external32', ibuf, 2, MPI_INTEGER, xpacked, 64_MPI_ADDRESS_KIND, xpos, ierr)
  call check(xpos == 8 .and. ichar(xpacked(4)) == 1 .and. ichar(xpacked(1)) == 0, 'MPI_Pack_external')
  ibuf2 = 0
  xpos = 0
  call MPI_Unpack_external('external32', xpacked, 8_MPI_ADDRESS_KIND, xpos, ibuf2, 2, MPI_INTEGER, ierr)
  call check(ibuf2(1) == 1 .and. ibuf2(2) == 2 .and. xpos == 8, 'MPI_Unpack_external')
  call MPI_Type_free(vec, ierr)

  call report()
  call MPI_Finalize(ierr)
end program types
