! Communicators, groups and topologies through the mpi module: split, dup, compare,
! groups (incl, translate_ranks), Cartesian grids with LOGICAL periods (create, get,
! coords, shift, sub), MPI_Dims_create, and attributes (MPI_Comm_get_attr on a
! predefined key, set/get/delete of an INTEGER(KIND=MPI_ADDRESS_KIND) value).
program topo
  use mpi
  use testutil
  implicit none
  integer :: ierr, rank, nprocs, i, half, hrank, hsize, res, dup, grp, sub, sgrp
  integer :: cart, ndims, dims(2), coords(2), src, dst, row, rsize, topotype
  integer :: ranks(2), tranks(2)
  logical :: periods(2), remain(2), flag, inter
  integer(kind=MPI_ADDRESS_KIND) :: val

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, half, ierr)
  call MPI_Comm_rank(half, hrank, ierr)
  call MPI_Comm_size(half, hsize, ierr)
  call check(hsize == (nprocs + 1 - mod(rank, 2)) / 2, 'split size')
  call check(hrank == hsize - 1 - rank / 2, 'split rank (key reverses order)')
  call MPI_Comm_test_inter(half, inter, ierr)
  call check(.not. inter, 'MPI_Comm_test_inter')
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_compare(dup, MPI_COMM_WORLD, res, ierr)
  call check(res == MPI_CONGRUENT, 'MPI_Comm_compare')

  ! Groups.
  call MPI_Comm_group(MPI_COMM_WORLD, grp, ierr)
  ranks = [nprocs - 1, 0]
  call MPI_Group_incl(grp, min(2, nprocs), ranks, sgrp, ierr)
  call MPI_Group_translate_ranks(sgrp, min(2, nprocs), [0, 1], grp, tranks, ierr)
  call check(tranks(1) == nprocs - 1, 'MPI_Group_translate_ranks')
  call MPI_Comm_create(MPI_COMM_WORLD, sgrp, sub, ierr)
  if (rank == 0 .or. rank == nprocs - 1) then
    call check(sub /= MPI_COMM_NULL, 'MPI_Comm_create member')
    call MPI_Comm_free(sub, ierr)
  else
    call check(sub == MPI_COMM_NULL, 'MPI_Comm_create non-member')
  end if
  call MPI_Group_free(sgrp, ierr)
  call MPI_Group_free(grp, ierr)
  call check(grp == MPI_GROUP_NULL, 'MPI_Group_free')

  ! A periodic ring of rows: dims from MPI_Dims_create, LOGICAL periods.
  dims = 0
  call MPI_Dims_create(nprocs, 2, dims, ierr)
  call check(dims(1) * dims(2) == nprocs .and. dims(1) >= dims(2), 'MPI_Dims_create')
  periods = [.true., .false.]
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  call MPI_Topo_test(cart, topotype, ierr)
  call check(topotype == MPI_CART, 'MPI_Topo_test')
  call MPI_Cartdim_get(cart, ndims, ierr)
  call check(ndims == 2, 'MPI_Cartdim_get')
  periods = [.false., .true.]
  call MPI_Cart_get(cart, 2, dims, periods, coords, ierr)
  call check(periods(1) .and. .not. periods(2), 'MPI_Cart_get periods')
  call check(coords(1) == rank / dims(2) .and. coords(2) == mod(rank, dims(2)), 'MPI_Cart_get coords')
  call MPI_Cart_coords(cart, rank, 2, coords, ierr)
  call MPI_Cart_rank(cart, coords, i, ierr)
  call check(i == rank, 'MPI_Cart_rank')
  call MPI_Cart_shift(cart, 0, 1, src, dst, ierr)
  call check(dst == mod(rank + dims(2), nprocs), 'MPI_Cart_shift periodic')
  call MPI_Cart_shift(cart, 1, 1, src, dst, ierr)
  if (coords(2) == dims(2) - 1) call check(dst == MPI_PROC_NULL, 'MPI_Cart_shift edge')
  remain = [.false., .true.]
  call MPI_Cart_sub(cart, remain, row, ierr)
  call MPI_Comm_size(row, rsize, ierr)
  call check(rsize == dims(2), 'MPI_Cart_sub')
  call MPI_Comm_free(row, ierr)
  call MPI_Comm_free(cart, ierr)

  ! Attributes.
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag, ierr)
  call check(flag .and. val >= 32767, 'MPI_TAG_UB')
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, val, flag, ierr)
  call check(.not. flag .or. val == 0 .or. val == 1, 'MPI_WTIME_IS_GLOBAL')

  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_free(half, ierr)
  call report()
  call MPI_Finalize(ierr)
end program topo
