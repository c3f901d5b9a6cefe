"""What every op file declares with: the Op dataclass, what an op reduces over, and the shapes of chain values."""
import dataclasses

ELEMENTWISE = "element-wise"
GROUP = "group"  # a reduction over a group of channels of a row (GroupNorm)
ROW = "row"  # a reduction over the whole row (the hidden features): softmax, logsumexp, sum, max...
COLUMN = "column"  # a reduction over the batch, one per channel (BatchNorm1d)
WINDOW = "window"  # a pool over windows of the features (AvgPool1d), run on the Linear's weight

# Under torch.autocast (Op.autocast): the op runs in its input's type, in float32, or promotes to float32.
SAME, FP32, PROMOTES = "same", "fp32", "promotes"

# The shape of a chain value: the (batch, hidden) tensor, or one value a row ((batch, 1) or (batch,)).
FULL, ROW_VALUE = "full", "row"


@dataclasses.dataclass(frozen=True)
class Op:
    kind: str  # the Stage kind
    title: str  # its words in plans, module titles and explanations
    short: str  # its piece of a module's readable name
    spellings: str  # how the front end recognizes it (messages, the README table)
    reduces: str = ELEMENTWISE  # ELEMENTWISE, or what it reduces over (GROUP, ROW)
    takes: str = "any"  # the shape of value it reads: FULL, ROW_VALUE or "any" (element-wise ops: either)
    makes: str = "same"  # the shape of value it makes: FULL, ROW_VALUE or "same" (as it reads)
    scalars: tuple = ()  # the Stage params it reads at run time (kernel arguments: one build serves any value)
    # values read from the layer's module at each call rather than fixed at trace time: name -> Python of its
    # value, `{m}` standing for the module (BatchNorm: train or eval, its momentum for the running statistics)
    live: tuple = ()
    buffers: tuple = ()  # the Stage params naming buffers its kernels update (BatchNorm's running statistics)
    choices: tuple = ()  # the Stage params baked into its template (they change the emitted CUDA)
    kinks: object = None  # Stage -> ((position, slope below, slope above), ...): where its derivative jumps (a
    # position is a number or the name of the parameter the op compares x against)
    describe: object = None  # Stage -> its title with the constants that matter (default: `title`)
    # Element types (fusegen/dtypes.py): what its arithmetic runs in, whatever the tensors' element type (the
    # epilogue is fp32 throughout), and what a reduction's state and statistics accumulate in.
    compute: str = "float32"
    accumulate: str = ""  # reductions: their state's type
    # What torch.autocast("cuda") makes of it, for a float32 layer whose Linear ran in 16 bits: SAME (runs in its
    # input's type, its value rounded to it), FP32 (on autocast's float32 list: its input cast up, its value
    # float32) or PROMOTES (a float32 tensor operand: type promotion makes its value float32); "": not
    # modelled, such a layer renders without autocast.
    autocast: str = ""
    # Draws a random number per element (dropout): the module passes the kernels a fresh seed each call, and backward
    # the same one (a counter-based stream: the mask is recomputed, not stored).
    random: bool = False

    def title_of(self, stage) -> str:
        return self.describe(stage) if self.describe else self.title

    def live_expr(self, name, module_expr, stage=None):
        """Python reading scalar `name` from the module at call time, or None (fixed at trace time); `{p}`-style
        fields name the stage's params, as traced."""
        params = {k: repr(v) for k, v in stage.params} if stage else {}
        return dict(self.live)[name].format(m=module_expr, **params) if name in dict(self.live) else None

    def kinks_of(self, stage) -> tuple:
        return self.kinks(stage) if self.kinks else ()
