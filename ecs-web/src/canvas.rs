//! The picture: RGBA pixels the page copies into its `<canvas>` once a
//! frame. The arena is drawn with the floor at the bottom; sparks and
//! rockets as short streaks along their velocity, so motion reads at any
//! frame rate.

/// Pixels per row of the picture.
pub const WIDTH: usize = 512;
/// Rows of the picture.
pub const HEIGHT: usize = 512;
/// Pixels between the picture's edge and the arena's wall.
const BORDER: f32 = 8.0;

/// Colours, as the showcase's pictures use them.
pub(crate) const BACKGROUND: [u8; 3] = [12, 14, 26];
const WALL: [u8; 3] = [92, 104, 140];

/// How a dot is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Look {
    Rocket,
    Hot,
    Warm,
    Cool,
    Shielded,
    Frozen,
}

impl Look {
    fn colour(self) -> [u8; 3] {
        match self {
            Look::Rocket => [255, 255, 255],
            Look::Hot => [255, 236, 140],
            Look::Warm => [255, 150, 40],
            Look::Cool => [200, 50, 40],
            Look::Shielded => [90, 220, 255],
            Look::Frozen => [170, 200, 255],
        }
    }

    /// Pixels per side of the dot.
    fn size(self) -> i32 {
        match self {
            Look::Rocket => 3,
            _ => 2,
        }
    }
}

/// The picture and the mapping from arena units to its pixels.
pub(crate) struct Canvas {
    rgba: Vec<u8>,
    /// Pixels per arena unit.
    scale: f32,
}

impl Canvas {
    pub(crate) fn new(arena: f32) -> Canvas {
        Canvas { rgba: vec![0; WIDTH * HEIGHT * 4], scale: (WIDTH as f32 - 2.0 * BORDER) / arena }
    }

    /// The arena point under a pixel (the floor is `y = 0`).
    pub(crate) fn to_arena(&self, px: f32, py: f32) -> (f32, f32) {
        ((px - BORDER) / self.scale, (HEIGHT as f32 - BORDER - py) / self.scale)
    }

    fn to_pixel(&self, x: f32, y: f32) -> (f32, f32) {
        (BORDER + x * self.scale, HEIGHT as f32 - BORDER - y * self.scale)
    }

    /// Clears to the background and draws the walls.
    pub(crate) fn clear(&mut self) {
        for pixel in self.rgba.chunks_exact_mut(4) {
            pixel.copy_from_slice(&[BACKGROUND[0], BACKGROUND[1], BACKGROUND[2], 255]);
        }
        let (lo, hi) = (BORDER as i32 - 2, WIDTH as i32 - BORDER as i32 + 1);
        for i in lo..=hi {
            for t in 0..2 {
                self.plot(i, lo + t, WALL);
                self.plot(i, hi - t, WALL);
                self.plot(lo + t, i, WALL);
                self.plot(hi - t, i, WALL);
            }
        }
    }

    /// A dot at `(x, y)` with a streak back to `(x - tx, y - ty)`, in arena
    /// units; the streak dims towards its tail.
    pub(crate) fn streak(&mut self, (x, y): (f32, f32), (tx, ty): (f32, f32), look: Look) {
        let (hx, hy) = self.to_pixel(x, y);
        let (ex, ey) = self.to_pixel(x - tx, y - ty);
        let steps = (hx - ex).abs().max((hy - ey).abs()).ceil().min(64.0) as i32;
        let colour = look.colour();
        for s in (1..=steps).rev() {
            let f = s as f32 / steps as f32;
            let dim = |c: u8| (f32::from(c) * (1.0 - 0.8 * f)) as u8;
            let (px, py) = (hx + (ex - hx) * f, hy + (ey - hy) * f);
            self.plot(px as i32, py as i32, [dim(colour[0]), dim(colour[1]), dim(colour[2])]);
        }
        let size = look.size();
        let (cx, cy) = (hx as i32 - size / 2, hy as i32 - size / 2);
        for dy in 0..size {
            for dx in 0..size {
                self.plot(cx + dx, cy + dy, colour);
            }
        }
    }

    fn plot(&mut self, x: i32, y: i32, [r, g, b]: [u8; 3]) {
        if (0..WIDTH as i32).contains(&x) && (0..HEIGHT as i32).contains(&y) {
            let at = (y as usize * WIDTH + x as usize) * 4;
            self.rgba[at..at + 3].copy_from_slice(&[r, g, b]);
        }
    }

    pub(crate) fn rgba(&self) -> &[u8] {
        &self.rgba
    }
}
