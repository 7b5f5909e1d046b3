//! C `long double` on x86-64: the 80-bit x87 extended format stored in 16 bytes.
//!
//! Comparisons are done in software (exact, portable). Addition and multiplication run
//! on the x87 unit itself, so results equal what a C program computes with `long double`
//! (round to nearest, 64-bit significand, under the process's x87 control word, which
//! Linux starts at extended precision). On other architectures there is no arithmetic
//! and [`ARITHMETIC`] is false, which makes `MPI_SUM`/`MPI_PROD` invalid on these types.

use std::cmp::Ordering;

/// True where long double addition and multiplication are available.
pub(crate) const ARITHMETIC: bool = cfg!(target_arch = "x86_64");

/// One 80-bit extended value: bytes 0..8 significand (explicit integer bit 63),
/// bytes 8..10 sign and 15-bit biased exponent, little-endian.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct F80(pub(crate) [u8; 10]);

impl F80 {
    pub(crate) fn load(bytes: &[u8]) -> F80 {
        let mut v = [0u8; 10];
        v.copy_from_slice(&bytes[..10]);
        F80(v)
    }

    pub(crate) fn store(self, bytes: &mut [u8]) {
        bytes[..10].copy_from_slice(&self.0);
    }

    fn significand(self) -> u64 {
        let mut m = [0u8; 8];
        m.copy_from_slice(&self.0[..8]);
        u64::from_le_bytes(m)
    }

    fn sign_exp(self) -> u16 {
        u16::from_le_bytes([self.0[8], self.0[9]])
    }

    /// NaN, or an encoding the x87 rejects as an invalid operand (unnormal, pseudo-NaN,
    /// pseudo-infinity): those compare unordered like NaN.
    fn is_unordered(self) -> bool {
        let exp = self.sign_exp() & 0x7fff;
        let m = self.significand();
        let integer_bit = m >> 63 == 1;
        if exp == 0x7fff {
            // Infinity is integer bit set and fraction zero; all else is NaN or invalid.
            !(integer_bit && m << 1 == 0)
        } else {
            exp != 0 && !integer_bit
        }
    }

    /// Magnitude as an ordered integer: (effective exponent, significand). Denormals
    /// and pseudo-denormals use exponent 1, which orders them correctly.
    fn magnitude(self) -> u128 {
        let exp = (self.sign_exp() & 0x7fff).max(1) as u128;
        let m = self.significand();
        if m == 0 {
            return 0;
        }
        (exp << 64) | m as u128
    }

    fn negative(self) -> bool {
        self.sign_exp() >> 15 == 1
    }

    /// IEEE comparison: `None` when either side is NaN; `+0 == -0`.
    pub(crate) fn compare(self, other: F80) -> Option<Ordering> {
        if self.is_unordered() || other.is_unordered() {
            return None;
        }
        let (ma, mb) = (self.magnitude(), other.magnitude());
        if ma == 0 && mb == 0 {
            return Some(Ordering::Equal);
        }
        let a = (self.negative(), ma);
        let b = (other.negative(), mb);
        Some(match (a.0, b.0) {
            (false, false) => ma.cmp(&mb),
            (true, true) => mb.cmp(&ma),
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
        })
    }

    /// The same value with the sign flipped (exact).
    pub(crate) fn neg(self) -> F80 {
        let mut v = self.0;
        v[9] ^= 0x80;
        F80(v)
    }

    /// `self + other`, rounded as the x87 does.
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn add(self, other: F80) -> F80 {
        let mut out = [0u8; 10];
        // SAFETY: the three pointers address live 10-byte arrays (`fld`/`fstp tbyte`
        // read/write exactly 10 bytes); the sequence pushes two x87 registers and pops
        // both, leaving the x87 stack empty as the ABI requires; every x87 register is
        // declared clobbered and no stack memory is touched.
        unsafe {
            std::arch::asm!(
                "fld tbyte ptr [{a}]",
                "fld tbyte ptr [{b}]",
                "faddp st(1), st",
                "fstp tbyte ptr [{o}]",
                a = in(reg) self.0.as_ptr(),
                b = in(reg) other.0.as_ptr(),
                o = in(reg) out.as_mut_ptr(),
                out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                options(nostack),
            );
        }
        F80(out)
    }

    /// `self * other`, rounded as the x87 does.
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn mul(self, other: F80) -> F80 {
        let mut out = [0u8; 10];
        // SAFETY: as in `add`: valid 10-byte operands and result, balanced x87 stack,
        // all x87 registers declared clobbered, no stack use.
        unsafe {
            std::arch::asm!(
                "fld tbyte ptr [{a}]",
                "fld tbyte ptr [{b}]",
                "fmulp st(1), st",
                "fstp tbyte ptr [{o}]",
                a = in(reg) self.0.as_ptr(),
                b = in(reg) other.0.as_ptr(),
                o = in(reg) out.as_mut_ptr(),
                out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                options(nostack),
            );
        }
        F80(out)
    }

    /// Without an x87 unit there is no arithmetic: `check_op` rejects SUM/PROD on long
    /// double there, so these are never reached; they return NaN rather than a wrong number.
    #[cfg(not(target_arch = "x86_64"))]
    pub(crate) fn add(self, _other: F80) -> F80 {
        F80::QUIET_NAN
    }

    #[cfg(not(target_arch = "x86_64"))]
    pub(crate) fn mul(self, _other: F80) -> F80 {
        F80::QUIET_NAN
    }

    #[cfg(not(target_arch = "x86_64"))]
    const QUIET_NAN: F80 = F80([0, 0, 0, 0, 0, 0, 0, 0xc0, 0xff, 0x7f]);

    /// Exact conversion from `f64` (every f64 is representable).
    #[cfg(test)]
    pub(crate) fn from_f64(x: f64) -> F80 {
        let bits = x.to_bits();
        let sign = ((bits >> 63) as u16) << 15;
        let exp = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1u64 << 52) - 1);
        let (e, m): (u16, u64) = if exp == 0x7ff {
            (0x7fff, (1u64 << 63) | (frac << 11))
        } else if exp == 0 {
            if frac == 0 {
                (0, 0)
            } else {
                // Subnormal f64: normalise (f80's range covers it easily).
                let shift = frac.leading_zeros() as i32; // bits above the top set bit
                let m = frac << shift;
                // value = frac * 2^-1074 = m * 2^(-1074 - shift); f80 value = m * 2^(e - 16383 - 63)
                let e = -1074 - shift + 16383 + 63;
                (e as u16, m)
            }
        } else {
            ((exp - 1023 + 16383) as u16, (1u64 << 63) | (frac << 11))
        };
        let mut v = [0u8; 10];
        v[..8].copy_from_slice(&m.to_le_bytes());
        v[8..].copy_from_slice(&(sign | e).to_le_bytes());
        F80(v)
    }
}
