//! Pictures of a run: the arena as a PNG every few frames, every frame in
//! an animated GIF, a strip of four moments (the README's picture), and a
//! chart of the per-frame figures as SVG. Nothing here touches the ECS: the
//! game hands over dots and numbers.

use std::fs::{self, File};
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::time::Duration;

use plotters::prelude::*;

/// Pixels per side of one arena picture.
const SIZE: usize = 240;
/// Pixels between the picture's edge and the arena's wall.
const BORDER: usize = 4;

/// How a dot is drawn: one colour per state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Look {
    /// A rocket on its way up (drawn larger).
    Rocket,
    /// A fresh spark.
    Hot,
    /// A spark halfway through its life.
    Warm,
    /// A spark about to fade.
    Cool,
    /// A spark with a shield that absorbs the next wall hit.
    Shielded,
    /// A spark stuck to a wall.
    Frozen,
}

/// The palette, by index: background, wall, then one colour per [`Look`].
const PALETTE: [[u8; 3]; 8] = [
    [12, 14, 26],
    [92, 104, 140],
    [255, 255, 255],
    [255, 236, 140],
    [255, 150, 40],
    [200, 50, 40],
    [90, 220, 255],
    [170, 200, 255],
];
const BACKGROUND: u8 = 0;
const WALL: u8 = 1;

impl Look {
    fn index(self) -> u8 {
        self as u8 + 2
    }

    /// Pixels per side of the dot.
    fn size(self) -> usize {
        match self {
            Look::Rocket => 3,
            _ => 2,
        }
    }
}

/// One frame's figures, for the chart.
#[derive(Clone, Debug, Default)]
pub struct Figures {
    /// The frame's number.
    pub frame: u64,
    /// Entities alive at the end of the frame.
    pub alive: usize,
    /// Of those, frozen.
    pub frozen: usize,
    /// Spawned during the frame.
    pub spawned: usize,
    /// Despawned during the frame.
    pub despawned: usize,
    /// Each system's time this frame, by name.
    pub systems: Vec<(String, Duration)>,
}

/// Collects a run's pictures and figures and writes them into a folder.
pub struct Recorder {
    dir: PathBuf,
    /// Write a PNG every this many frames.
    every: u64,
    gif: gif::Encoder<BufWriter<File>>,
    canvas: Vec<u8>,
    /// Frames kept for the strip, as palette indices.
    moments: Vec<Vec<u8>>,
    /// Frames whose picture goes into the strip.
    strip_frames: [u64; 4],
    figures: Vec<Figures>,
    written: Vec<PathBuf>,
}

impl Recorder {
    /// Starts a recording into `dir` (created if missing): a PNG every
    /// `every` frames, and the frames in `strip_frames` kept for the strip.
    pub fn new(dir: &Path, every: u64, strip_frames: [u64; 4]) -> io::Result<Self> {
        fs::create_dir_all(dir)?;
        // Pictures of an earlier, longer run would be mistaken for this one's.
        for entry in fs::read_dir(dir)? {
            let path = entry?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if name.starts_with("arena-") && name.ends_with(".png") {
                fs::remove_file(&path)?;
            }
        }
        let gif_path = dir.join("arena.gif");
        let palette: Vec<u8> = PALETTE.iter().flatten().copied().collect();
        let file = BufWriter::new(File::create(&gif_path)?);
        let mut gif = gif::Encoder::new(file, SIZE as u16, SIZE as u16, &palette).map_err(io::Error::other)?;
        gif.set_repeat(gif::Repeat::Infinite).map_err(io::Error::other)?;
        Ok(Recorder {
            dir: dir.to_owned(),
            every,
            gif,
            canvas: vec![BACKGROUND; SIZE * SIZE],
            moments: Vec::new(),
            strip_frames,
            figures: Vec::new(),
            written: vec![gif_path],
        })
    }

    /// Draws frame `frame` from its dots (positions in `0..=arena` on both
    /// axes) and adds it to the animation.
    pub fn picture(
        &mut self,
        frame: u64,
        arena: f32,
        dots: impl IntoIterator<Item = (f32, f32, Look)>,
    ) -> io::Result<()> {
        self.canvas.fill(BACKGROUND);
        for i in BORDER - 1..SIZE - BORDER + 1 {
            for (x, y) in [(i, BORDER - 1), (i, SIZE - BORDER), (BORDER - 1, i), (SIZE - BORDER, i)] {
                self.canvas[y * SIZE + x] = WALL;
            }
        }
        let span = (SIZE - 2 * BORDER - 1) as f32;
        for (x, y, look) in dots {
            let px = BORDER + ((x / arena).clamp(0.0, 1.0) * span) as usize;
            // Screen rows grow downwards; the arena's y grows upwards.
            let py = BORDER + ((1.0 - (y / arena).clamp(0.0, 1.0)) * span) as usize;
            self.dot(px, py, look);
        }
        let mut gif_frame = gif::Frame {
            width: SIZE as u16,
            height: SIZE as u16,
            // Hundredths of a second: 30 frames a second, as the game runs.
            delay: 3,
            ..gif::Frame::default()
        };
        gif_frame.buffer = std::borrow::Cow::Borrowed(&self.canvas);
        self.gif.write_frame(&gif_frame).map_err(io::Error::other)?;
        if frame.is_multiple_of(self.every) {
            let path = self.dir.join(format!("arena-{frame:03}.png"));
            write_png(&path, SIZE, SIZE, &self.canvas)?;
            self.written.push(path);
        }
        if self.strip_frames.contains(&frame) {
            self.moments.push(self.canvas.clone());
        }
        Ok(())
    }

    /// A square dot, clipped to the arena.
    fn dot(&mut self, x: usize, y: usize, look: Look) {
        let size = look.size();
        for dy in 0..size {
            for dx in 0..size {
                let (x, y) = ((x + dx).min(SIZE - BORDER - 1), (y + dy).min(SIZE - BORDER - 1));
                self.canvas[y * SIZE + x] = look.index();
            }
        }
    }

    /// Records one frame's figures for the chart.
    pub fn figures(&mut self, figures: Figures) {
        self.figures.push(figures);
    }

    /// Writes the strip and the chart, closes the animation, and returns
    /// every file written.
    pub fn finish(mut self) -> io::Result<Vec<PathBuf>> {
        if !self.moments.is_empty() {
            let path = self.dir.join("strip.png");
            write_png(&path, SIZE * self.moments.len(), SIZE, &side_by_side(&self.moments))?;
            self.written.push(path);
        }
        let path = self.dir.join("figures.svg");
        chart(&path, &self.figures).map_err(|e| io::Error::other(e.to_string()))?;
        self.written.push(path);
        drop(self.gif);
        Ok(self.written)
    }
}

/// Pictures of `SIZE` rows placed left to right.
fn side_by_side(pictures: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(pictures.len() * SIZE * SIZE);
    for row in 0..SIZE {
        for picture in pictures {
            out.extend_from_slice(&picture[row * SIZE..(row + 1) * SIZE]);
        }
    }
    out
}

/// Writes palette indices as a paletted PNG.
fn write_png(path: &Path, width: usize, height: usize, indices: &[u8]) -> io::Result<()> {
    let file = BufWriter::new(File::create(path)?);
    let mut encoder = png::Encoder::new(file, width as u32, height as u32);
    encoder.set_color(png::ColorType::Indexed);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_palette(PALETTE.iter().flatten().copied().collect::<Vec<u8>>());
    let mut writer = encoder.write_header().map_err(io::Error::other)?;
    writer.write_image_data(indices).map_err(io::Error::other)?;
    writer.finish().map_err(io::Error::other)
}

/// Two panels over the frames: entity counts, and each system's time.
fn chart(path: &Path, figures: &[Figures]) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (960, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(330);
    let frames = figures.last().map_or(1, |f| f.frame + 1);

    let most = figures.iter().map(|f| f.alive.max(f.spawned).max(f.despawned)).max().unwrap_or(1);
    let mut counts = ChartBuilder::on(&top)
        .caption("entities per frame", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(56)
        .build_cartesian_2d(0..frames, 0..most + most / 10 + 1)?;
    counts.configure_mesh().x_desc("frame").light_line_style(WHITE.mix(0.0)).draw()?;
    type Line = (&'static str, RGBColor, fn(&Figures) -> usize);
    let lines: [Line; 4] = [
        ("alive", RGBColor(40, 80, 200), |f| f.alive),
        ("frozen", RGBColor(80, 170, 220), |f| f.frozen),
        ("spawned", RGBColor(40, 160, 60), |f| f.spawned),
        ("despawned", RGBColor(210, 60, 50), |f| f.despawned),
    ];
    for (name, colour, value) in lines {
        counts
            .draw_series(LineSeries::new(figures.iter().map(|f| (f.frame, value(f))), colour.stroke_width(2)))?
            .label(name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], colour.stroke_width(2)));
    }
    counts.configure_series_labels().background_style(WHITE.mix(0.9)).border_style(BLACK).draw()?;

    let names: Vec<&str> = figures.first().map_or(Vec::new(), |f| f.systems.iter().map(|(n, _)| n.as_str()).collect());
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let slowest = figures.iter().flat_map(|f| f.systems.iter().map(|&(_, d)| micros(d))).fold(1.0, f64::max);
    let mut times = ChartBuilder::on(&bottom)
        .caption("time per system (µs)", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(56)
        .build_cartesian_2d(0..frames, 0.0..slowest * 1.1)?;
    times.configure_mesh().x_desc("frame").light_line_style(WHITE.mix(0.0)).draw()?;
    for (i, name) in names.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let points = figures.iter().filter_map(|f| f.systems.get(i).map(|&(_, d)| (f.frame, micros(d))));
        times
            .draw_series(LineSeries::new(points, colour.stroke_width(2)))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], colour.stroke_width(2)));
    }
    times.configure_series_labels().background_style(WHITE.mix(0.9)).border_style(BLACK).draw()?;
    root.present()?;
    Ok(())
}
