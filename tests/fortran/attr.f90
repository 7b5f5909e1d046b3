! Attributes with callbacks written in Fortran: MPI_Comm_create_keyval (values of
! KIND=MPI_ADDRESS_KIND), MPI-1's MPI_Keyval_create (INTEGER values), and
! MPI_Type_create_keyval; the predefined MPI_COMM_DUP_FN, MPI_COMM_NULL_COPY_FN,
! MPI_DUP_FN, MPI_NULL_DELETE_FN; and MPI-1's INTEGER forms of MPI_Type_extent,
! MPI_Type_hvector and MPI_Type_struct.
module callbacks
  use mpi
  use testutil
  implicit none
  integer :: copies = 0, deletes = 0, last_deleted = -1
contains
  subroutine copy_plus(oldcomm, keyval, extra, vin, vout, flag, ierr)
    integer :: oldcomm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra, vin, vout
    logical :: flag
    copies = copies + 1
    vout = vin + extra
    flag = .true.
    ierr = MPI_SUCCESS
  end subroutine copy_plus

  subroutine delete_count(comm, keyval, val, extra, ierr)
    integer :: comm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    deletes = deletes + 1
    last_deleted = int(val)
    ierr = MPI_SUCCESS
  end subroutine delete_count

  subroutine copy4(oldcomm, keyval, extra, vin, vout, flag, ierr)
    integer :: oldcomm, keyval, extra, vin, vout, ierr
    logical :: flag
    copies = copies + 1
    vout = vin * extra
    flag = .true.
    ierr = MPI_SUCCESS
  end subroutine copy4
end module callbacks

program attr
  use mpi
  use callbacks
  implicit none
  integer :: ierr, rank, key, key2, key4, tkey, dup, dup2, dup3, t, t2, ext
  integer :: hv, st, blens(2), types(2), disps(2), sz
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  integer :: val4
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)

  ! A key with Fortran callbacks; extra_state is added by the copy.
  extra = 1000
  call MPI_Comm_create_keyval(copy_plus, delete_count, key, extra, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Comm_create_keyval')
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  val = 42
  call MPI_Comm_set_attr(dup, key, val, ierr)
  call MPI_Comm_dup(dup, dup2, ierr)
  call check(copies == 1, 'copy callback called')
  call MPI_Comm_get_attr(dup2, key, val, flag, ierr)
  call check(flag .and. val == 1042, 'copied value')
  call MPI_Comm_free(dup2, ierr)
  call check(deletes == 1 .and. last_deleted == 1042, 'delete callback on free')
  val = 7
  call MPI_Comm_set_attr(dup, key, val, ierr)
  call check(deletes == 2 .and. last_deleted == 42, 'delete callback on replace')
  call MPI_Comm_delete_attr(dup, key, ierr)
  call check(deletes == 3 .and. last_deleted == 7, 'delete callback on delete')
  call MPI_Comm_get_attr(dup, key, val, flag, ierr)
  call check(.not. flag, 'deleted attribute')
  call MPI_Comm_free_keyval(key, ierr)
  call check(key == MPI_KEYVAL_INVALID, 'MPI_Comm_free_keyval')

  ! The predefined callbacks.
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key, extra, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key2, extra, ierr)
  val = 5
  call MPI_Comm_set_attr(dup, key, val, ierr)
  call MPI_Comm_set_attr(dup, key2, val, ierr)
  call MPI_Comm_dup(dup, dup2, ierr)
  call MPI_Comm_get_attr(dup2, key, val, flag, ierr)
  call check(flag .and. val == 5, 'MPI_COMM_DUP_FN')
  call MPI_Comm_get_attr(dup2, key2, val, flag, ierr)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN')
  call MPI_Comm_free(dup2, ierr)
  call MPI_Comm_free_keyval(key, ierr)
  call MPI_Comm_free_keyval(key2, ierr)

  ! MPI-1: INTEGER values.
  call MPI_Keyval_create(copy4, MPI_NULL_DELETE_FN, key4, 3, ierr)
  call MPI_Attr_put(dup, key4, -14, ierr)
  call MPI_Comm_dup(dup, dup3, ierr)
  call MPI_Attr_get(dup3, key4, val4, flag, ierr)
  call check(flag .and. val4 == -42, 'MPI_Keyval_create copy')
  call MPI_Keyval_free(key4, ierr)
  call MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, key4, 0, ierr)
  call MPI_Attr_put(dup, key4, 9, ierr)
  call MPI_Comm_free(dup3, ierr)
  call MPI_Comm_dup(dup, dup3, ierr)
  call MPI_Attr_get(dup3, key4, val4, flag, ierr)
  call check(flag .and. val4 == 9, 'MPI_DUP_FN')
  call MPI_Comm_free(dup3, ierr)
  call MPI_Keyval_free(key4, ierr)

  ! Datatype keys.
  copies = 0
  call MPI_Type_create_keyval(copy_plus, delete_count, tkey, extra, ierr)
  call MPI_Type_contiguous(2, MPI_INTEGER, t, ierr)
  val = 1
  call MPI_Type_set_attr(t, tkey, val, ierr)
  call MPI_Type_dup(t, t2, ierr)
  call MPI_Type_get_attr(t2, tkey, val, flag, ierr)
  call check(copies == 1 .and. flag .and. val == 1001, 'datatype attribute copy')
  deletes = 0
  call MPI_Type_free(t2, ierr)
  call check(deletes == 1, 'datatype attribute delete')
  call MPI_Type_delete_attr(t, tkey, ierr)
  call MPI_Type_free(t, ierr)
  call MPI_Type_free_keyval(tkey, ierr)

  ! MPI-1's INTEGER displacements and extents.
  call MPI_Type_hvector(3, 1, 16, MPI_INTEGER, hv, ierr)
  call MPI_Type_extent(hv, ext, ierr)
  call check(ext == 36, 'MPI_Type_hvector / MPI_Type_extent')
  blens = [1, 2]
  disps = [0, 8]
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  call MPI_Type_struct(2, blens, disps, types, st, ierr)
  call MPI_Type_size(st, sz, ierr)
  call MPI_Type_extent(st, ext, ierr)
  call check(sz == 20 .and. ext == 24, 'MPI_Type_struct')
  call MPI_Type_free(hv, ierr)
  call MPI_Type_free(st, ierr)

  call MPI_Comm_free(dup, ierr)
  call report()
  call MPI_Finalize(ierr)
end program attr
