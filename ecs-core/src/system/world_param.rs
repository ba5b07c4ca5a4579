//! `&World` as a system parameter: read access to everything, checked
//! against every write like any other parameter.

use crate::system::access::AccessConflict;
use crate::system::param::{SystemMeta, SystemParam};
use crate::world::World;

// SAFETY: a `&World` hands out only reads of components, resources and
// entity metadata (its `&self` methods), and `init_state` records a read of
// every component and resource, which conflicts with every write of the
// same system and of any system that could run alongside. The one `&self`
// method that changes anything, `World::reserve_entity`, moves an atomic
// counter; the schedule runs a system that reads the whole world in a
// group of its own, so no reservation lanes (which assume that counter
// stands still) are open while it runs.
unsafe impl SystemParam for &World {
    type State = ();
    type Item<'w, 's> = &'w World;

    fn init_state(world: &mut World, meta: &mut SystemMeta) -> Result<(), AccessConflict> {
        meta.add_world_read(world)
    }

    #[inline]
    unsafe fn get_param<'w, 's>(_: &'s mut (), world: &'w World, _: &'s SystemMeta) -> &'w World {
        world
    }
}
