"""Every word the widget shows, in English and Korean: one table, read by Python and the front end.

Captions are stored in the frames as messages ``[key, {arg: value}]`` and worded where they are
shown, so switching ``lang`` re-words a whole lesson without rebuilding it.  A template names its
arguments in braces; a value is text, a nested message, or ``{"join": [message, ...]}`` (joined
with the language's ``list_sep``).  :func:`render` does exactly what ``widget.js`` does.

>>> fmt("en", "grad_none", leaf="x")
'x.grad is None'
>>> fmt("ko", "grad_none", leaf="x")
'x.grad: None'
>>> render("en", ["cap_zero", {"leaf": "x", "before": "20", "after": "0"}])
'x.grad.zero_(): 20 → 0'
"""

import re

from ..dot_text import WORDS

__all__ = ["LANGS", "STRINGS", "strings", "fmt", "render"]

LANGS = ("en", "ko")

STRINGS = {
    "en": {
        # -- controls (also their aria-labels and titles) --
        "widget_label": "Autograd animation of {root}",
        "play": "Play",
        "pause": "Pause",
        "step_back": "Step back",
        "step_forward": "Step forward",
        "to_forward": "Jump to the start of the forward pass",
        "to_backward": "Jump to the start of the backward pass",
        "scrubber": "Step",
        "speed": "Speed",
        "step_of": "Step {i} / {n}",
        "forward_pass": "Forward pass",
        "backward_pass": "Backward pass",
        "start": "Start",
        "backward_btn": "backward()",
        "backward_title": "Run {root}.backward() again and animate what the engine does",
        "retain_graph": "retain_graph=True",
        "zero_btn": "zero_()",
        "zero_title": "Set every leaf's .grad to zero with .grad.zero_()",
        "keys_help": "Keys: Space play/pause, ←/→ step, Home/End jump",
        "graph_label": "Computation graph",
        "zoom_in": "Zoom in (Ctrl + wheel)",
        "zoom_out": "Zoom out",
        "zoom_fit": "Fit the whole graph",
        "fullscreen": "Fullscreen",
        "key_title": "Key: what the marks mean",
        "key_leaf": "leaf tensor (requires_grad)",
        "key_const": "constant or data: no gradient",
        "key_root": "output (where backward starts)",
        "key_op": "op, named by its grad_fn",
        "key_shape": "shape of the tensor",
        "key_focus": "the node this step is about",
        "key_lit": "the nodes it uses",
        "key_fwd": "forward: values flow along the arrows",
        "key_bwd": "backward: the gradient flows back",
        "so_far": "so far",
        "caption_label": "What happens at this step",
        "derivation_title": "By hand: the chain rule",
        "instructor_title": "Derivation",
        "forward_defs": "The forward pass, op by op",
        "path_n": "path {k}",
        "paths_more": "… and {n} more paths",
        "lines_more": "… and {n} more ops",
        "chain_result": "chain rule: {value}",
        "closed_form": "closed form: {value}",
        "engine_grad": "engine: {leaf}.grad = {value}",
        "agrees": "agrees",
        "differs": "differs by {diff}",
        "accumulated": "= {k} × the chain rule: {k} backward() calls added up in .grad",
        "zeroed": "= 0 × the chain rule: zero_() cleared it, the next backward() adds it again",
        "grad_none": "{leaf}.grad is None",
        "no_derivation": "No hand derivation for this graph ({reason}).",
        "cannot_render": "The widget cannot draw this graph: {reason}",
        "no_js": "Static picture: run the notebook (or open the saved page) to animate it.",
        # -- captions, one per frame kind --
        "cap_start": "The computation graph of {root}. Press Play (or Space) to run the forward pass.",
        "cap_fwd_in": "Forward, op {k} of {n}: {node} computes {expr} from {inputs}",
        "cap_fwd_out": "{out} = {expr} = {value}; PyTorch keeps {node} to run this op backwards later.",
        "cap_seed": "backward() call {run} ({args}) starts at {root} with the seed gradient ∂{root}/∂{root} = {seed}",
        "cap_sum": "{name} fed {k} ops, so the gradients coming back from them add up: {terms} = {total}",
        "cap_node": "{node} gets ∂{root}/∂{out} = {gin}, {sends}.",
        "cap_send": "multiplies by ∂{out}/∂{inp} = {local} and sends {grad} to {inp}",
        "cap_send_vjp": "applies its rule ({rule}) and sends {grad} to {inp}",
        "cap_send_formula": "sends ∂{root}/∂{inp} = {formula} = {grad} to {inp}",
        "cap_send_engine": "sends {grad} to {inp} by the engine's own rule (no hand derivation: gradviz's op table does not know {node})",
        "cap_send_layer": "sends {grad} to {inp} (the total of what the layer's ops sent there)",
        "cap_send_none": "sends nothing to {inp} (it needs no gradient)",
        "cap_acc_new": "AccumulateGrad: {leaf}.grad was None, so it becomes {after}",
        "cap_acc_add": "AccumulateGrad adds {g} into {leaf}.grad: {before} + {g} = {after} (gradients accumulate!)",
        "cap_done": "backward() call {run} is done: {grads}",
        "cap_zero": "{leaf}.grad.zero_(): {before} → {after}",
        "cap_zero_none": "{leaf}.grad is None: there is nothing to zero.",
        "cap_error": "backward() call {run} failed. The engine says: {message}{hint}",
        "cap_no_grad": "{root} does not require grad, so there is no backward pass to show.",
        "cap_fwd_group": "Forward: {count} of the {n} ops, folded into this group, run one after the other ({ops}); the last one gives {value}",
        "cap_bwd_group": "Backward through the ops folded into this group ({ops}): the gradient {gin} comes in, and the chain rule carries it through them one op at a time.",
        "cap_leaf": "{root} is a leaf: no op made it, so its graph is {root} alone. backward() hands the seed gradient straight to {root}.grad.",
        "cap_sync": "Since the last step shown, the notebook changed .grad: {items}",
        "cap_sync_item": "{leaf}.grad is now {value}",
        "cap_restored": "animate() only showed the pass above: it wrote no .grad ({items}), so the notebook's own {root}.backward() works as usual. The buttons act on the real tensors from here on.",
        # -- the graph's tooltips and labels: gradviz.dot_text.WORDS --
        **WORDS,
        "cap_list": "{items}",
        "list_sep": "; ",
        "cap_seed_replay": "animate() runs {root}.backward({args}) to show what the engine does (not one of your calls): it starts at {root} with the seed gradient ∂{root}/∂{root} = {seed}",
        "cap_seed_v": "backward() call {run} ({args}) starts at {root}. With gradient={v} it differentiates the scalar {L} = Σ {v} ⊙ {root}, so the seed is ∂{L}/∂{root} = {v} = {seed}",
        "cap_seed_v_replay": "animate() runs {root}.backward({args}) to show what the engine does (not one of your calls). With gradient={v} it differentiates the scalar {L} = Σ {v} ⊙ {root}, so the seed is ∂{L}/∂{root} = {v} = {seed}",
        "cap_done_replay": "animate()'s backward() is done ({grads}); it wrote no .grad and ran none of your tensor hooks, so {root}.backward() in the notebook starts from there.{hooks}{rerun}",
        "note_hooks_ran": " PyTorch gives no way to hold these hooks back, so they ran once in the widget's pass: {hooks}.",
        "note_function_rerun": " To show it, the widget ran your {fns} backward() once more (PyTorch cannot hand the picture your own pass).",
        "cap_error_replay": "animate()'s backward() failed. The engine says: {message}{hint}",
        "hint_scalar": " (backward() without gradient= needs a scalar output: a tensor holding one number.)",
        "hint_freed": " (An earlier backward() freed what the graph saved. Pass retain_graph=True to keep it, or tick “forward again if freed” to build the graph again first.)",
        "cap_forward_again_freed": "The last backward() (retain_graph=False) freed the graph, so the widget ran the forward pass again from the leaves, as running the cell again would ({root} = {value}). Now backward() runs, and adds its gradient to .grad.",
        "cap_forward_again_modified": "The leaves changed since this graph was built (a training step?), so the widget ran the forward pass again from the leaves as they are now: every value is redrawn, {root} = {value}, and the derivation is worked out again at these values.",
        "cap_forward_again_no_freed": "The graph was freed, and the widget cannot run this forward pass again (it calls your own code): run the cell again for a new graph.",
        "cap_forward_again_no_modified": "The leaves changed since this graph was built (a training step?), and the widget cannot run this forward pass again (it calls your own code): run the cell again for a graph of the values as they are now.",
        "engine_added": "engine: this backward() added {value} to {leaf}.grad (now {grad})",
        "graph_partial": "Part of the graph, at a readable size: it follows the step (− or fit shows all of it)",
        "forward_again": "forward again if freed",
        "forward_again_title": "When the graph was freed or the leaves changed since it was built, run the forward pass again from the leaves as they are now before backward() (untick to see PyTorch's error)",
    },
    "ko": {
        "widget_label": "{root}의 자동 미분 애니메이션",
        "play": "재생",
        "pause": "일시정지",
        "step_back": "이전 단계",
        "step_forward": "다음 단계",
        "to_forward": "순전파 처음으로",
        "to_backward": "역전파 처음으로",
        "scrubber": "단계",
        "speed": "속도",
        "step_of": "{i} / {n} 단계",
        "forward_pass": "순전파",
        "backward_pass": "역전파",
        "start": "처음",
        "backward_btn": "backward()",
        "backward_title": "{root}.backward() 다시 실행하기: 엔진이 하는 일을 단계별로 보여 줍니다",
        "retain_graph": "retain_graph=True",
        "zero_btn": "zero_()",
        "zero_title": "모든 잎 텐서의 .grad에 .grad.zero_() 실행: 모든 값이 영이 됩니다",
        "keys_help": "키: Space 재생/일시정지, ←/→ 한 단계, Home/End 처음/끝",
        "graph_label": "계산 그래프",
        "zoom_in": "확대 (Ctrl + 휠)",
        "zoom_out": "축소",
        "zoom_fit": "그래프 전체 보기",
        "fullscreen": "전체 화면",
        "key_title": "범례: 표시의 뜻",
        "key_leaf": "잎 텐서 (requires_grad)",
        "key_const": "상수 또는 데이터: 그라디언트 없음",
        "key_root": "출력 (backward 시작점)",
        "key_op": "연산, grad_fn 이름으로 표시",
        "key_shape": "텐서의 모양 (shape)",
        "key_focus": "이 단계의 노드",
        "key_lit": "이 단계가 쓰는 노드",
        "key_fwd": "순전파: 값이 화살표 방향으로",
        "key_bwd": "역전파: 그라디언트가 거꾸로",
        "so_far": "지금까지",
        "caption_label": "이 단계에서 일어나는 일",
        "derivation_title": "손으로 계산하기: 연쇄 법칙",
        "instructor_title": "유도 과정",
        "forward_defs": "순전파, 연산 하나씩",
        "path_n": "경로 {k}",
        "paths_more": "… 그리고 경로 {n}개 더",
        "lines_more": "… 그리고 연산 {n}개 더",
        "chain_result": "연쇄 법칙: {value}",
        "closed_form": "닫힌 형태: {value}",
        "engine_grad": "엔진: {leaf}.grad = {value}",
        "agrees": "일치",
        "differs": "차이 {diff}",
        "accumulated": "= 연쇄 법칙 × {k}: backward() 호출 {k}번의 그라디언트가 .grad 값에 누적됨",
        "zeroed": "= 연쇄 법칙 × 0: zero_() 실행으로 지워짐. 다음 backward() 호출에서 다시 더해집니다",
        "grad_none": "{leaf}.grad: None",
        "no_derivation": "이 그래프에는 손 계산을 보여 주지 않습니다 ({reason}).",
        "cannot_render": "위젯이 이 그래프를 그릴 수 없습니다: {reason}",
        "no_js": "정지된 그림입니다. 노트북을 실행하거나 저장된 페이지를 열면 움직입니다.",
        "cap_start": "{root}의 계산 그래프입니다. 재생 버튼을 누르거나 Space 키를 누르면 순전파가 시작됩니다.",
        "cap_fwd_in": "순전파, 연산 {k}/{n}: {node} 노드에서 {expr} 계산 (입력: {inputs})",
        "cap_fwd_out": "{out} = {expr} = {value}; 나중에 이 연산을 거꾸로 실행할 수 있도록 PyTorch에서는 {node} 노드를 기억해 둡니다.",
        "cap_seed": "backward() 호출 {run}번({args}): {root}에서 시작합니다. 시드 그라디언트 ∂{root}/∂{root} = {seed}",
        "cap_sum": "{name} 텐서는 연산 {k}개에 쓰였으므로 돌아오는 그라디언트를 더합니다: {terms} = {total}",
        "cap_node": "{node} 노드가 ∂{root}/∂{out} = {gin} 값을 받아 {sends}.",
        "cap_send": "국소 미분 ∂{out}/∂{inp} = {local} 값을 곱해 {grad} 값을 {inp} 쪽으로 보냅니다",
        "cap_send_vjp": "자기 규칙을 적용해({rule}) {grad} 값을 {inp} 쪽으로 보냅니다",
        "cap_send_formula": "∂{root}/∂{inp} = {formula} = {grad} 값을 {inp} 쪽으로 보냅니다",
        "cap_send_engine": "엔진 자체의 규칙으로 {grad} 값을 {inp} 쪽으로 보냅니다(gradviz 연산 표에 {node} 노드가 없어 손으로 쓴 유도가 없습니다)",
        "cap_send_layer": "{grad} 값을 {inp} 쪽으로 보냅니다(층 안의 연산들이 보낸 값의 합)",
        "cap_send_none": "{inp} 쪽에는 보내지 않습니다(그라디언트가 필요 없음)",
        "cap_acc_new": "AccumulateGrad: {leaf}.grad 값이 None이었으므로 새 값이 됩니다: {after}",
        "cap_acc_add": "AccumulateGrad 노드가 {leaf}.grad에 {g} 값을 더합니다: {before} + {g} = {after} (그라디언트는 누적됩니다!)",
        "cap_done": "backward() 호출 {run}번 끝: {grads}",
        "cap_zero": "{leaf}.grad.zero_(): {before} → {after}",
        "cap_zero_none": "{leaf}.grad 값이 None이라 영으로 만들 것이 없습니다.",
        "cap_error": "backward() 호출 {run}번 실패. 엔진의 메시지: {message}{hint}",
        "cap_no_grad": "{root} 텐서는 그라디언트가 필요 없는 텐서라서 보여 줄 역전파가 없습니다.",
        "cap_fwd_group": "순전파: 연산 {n}개 가운데 이 묶음에 접힌 {count}개가 차례로 실행됩니다({ops}). 마지막 연산의 결과: {value}",
        "cap_bwd_group": "이 묶음에 접힌 연산들을 거슬러 역전파합니다({ops}). 들어온 그라디언트 {gin} 값을 연쇄 법칙에 따라 연산 하나하나에 차례로 전합니다.",
        "cap_leaf": "{root} 텐서는 잎(leaf) 텐서입니다. 어떤 연산도 만들지 않았으므로 그래프에는 {root} 텐서 하나뿐이고, backward() 호출은 시드 그라디언트를 바로 {root}.grad에 넣습니다.",
        "cap_sync": "마지막으로 보여 준 단계 이후 노트북에서 .grad 값이 바뀌었습니다: {items}",
        "cap_sync_item": "{leaf}.grad = {value}",
        "cap_restored": "animate() 함수는 위의 과정을 보여 주기만 했고 .grad 값은 하나도 쓰지 않았습니다({items}). 그래서 노트북에서 직접 {root}.backward() 호출을 해도 평소처럼 동작합니다. 이제부터 버튼은 실제 텐서에 작동합니다.",
        # -- the graph's tooltips and labels (English: gradviz.dot_text.WORDS) --
        "tip_leaf": "잎(leaf) 텐서, requires_grad=True",
        "tip_data": "잎(leaf) 텐서 (데이터, 그라디언트 없음)",
        "tip_result": "{grad_fn} 연산의 결과",
        "tip_const": "상수",
        "tip_constant": "상수 {value}",
        "tip_retain": "retain_grad()",
        "tip_shape": "모양(shape) {shape}",
        "tip_dtype": "dtype {dtype}",
        "tip_grad": "{name}.grad",
        "tip_flow": "그라디언트: 출력을 {name} 텐서로 미분한 값",
        "tip_this": "이 텐서",
        "tip_in_full": "{what} (여기서는 요약: 손 계산의 확인 줄에 전체 값이 나옵니다)",
        "tip_op": "{grad_fn}: 이 연산이 만든 출력의 grad_fn",
        "tip_accumulate": "AccumulateGrad: 그라디언트를 잎 텐서의 .grad 값에 더합니다",
        "tip_edge": "이 간선을 따라 거꾸로 보내는 그라디언트",
        "cut_by": "{how} 호출로 끊김",
        "cap_list": "{items}",
        "list_sep": "; ",
        "cap_seed_replay": "animate() 함수가 엔진이 하는 일을 보여 주려고 {root}.backward({args}) 호출을 실행합니다(사용자의 호출이 아님). {root}에서 시작하고, 시드 그라디언트 ∂{root}/∂{root} = {seed}",
        "cap_seed_v": "backward() 호출 {run}번({args}): {root}에서 시작합니다. gradient={v} 인자를 주면 스칼라 {L} = Σ {v} ⊙ {root} 값을 미분하므로 시드는 ∂{L}/∂{root} = {v} = {seed}",
        "cap_seed_v_replay": "animate() 함수가 엔진이 하는 일을 보여 주려고 {root}.backward({args}) 호출을 실행합니다(사용자의 호출이 아님). gradient={v} 인자를 주면 스칼라 {L} = Σ {v} ⊙ {root} 값을 미분하므로 시드는 ∂{L}/∂{root} = {v} = {seed}",
        "cap_done_replay": "animate()의 backward() 끝({grads}). .grad 값을 하나도 쓰지 않았고 사용자의 텐서 훅도 실행하지 않았으므로 노트북의 {root}.backward() 호출은 거기서부터 시작합니다.{hooks}{rerun}",
        "note_hooks_ran": " PyTorch에는 이 훅들을 막는 방법이 없어서 위젯의 역전파에서 한 번 실행되었습니다: {hooks}.",
        "note_function_rerun": " 이 과정을 보여 주려고 위젯이 {fns}의 backward() 함수를 한 번 더 실행했습니다(PyTorch에서는 사용자의 역전파를 그림이 넘겨받을 수 없습니다).",
        "cap_error_replay": "animate()의 backward() 실패. 엔진의 메시지: {message}{hint}",
        "hint_scalar": " (gradient= 인자 없이 backward() 호출을 하려면 출력이 스칼라, 곧 숫자 하나인 텐서여야 합니다.)",
        "hint_freed": " (앞선 backward() 호출에서 그래프가 저장한 값이 해제되었습니다. 그래프를 남기려면 retain_graph=True 인자를 주고, 그래프를 새로 만들려면 ‘해제되면 순전파 다시 실행’을 켜세요.)",
        "cap_forward_again_freed": "마지막 backward() 호출(retain_graph=False)에서 그래프가 해제되었으므로, 셀을 다시 실행한 것처럼 위젯이 잎 텐서에서부터 순전파를 다시 실행했습니다({root} = {value}). 이제 backward() 호출이 가능하고, 그 그라디언트는 .grad 값에 더해집니다.",
        "cap_forward_again_modified": "그래프를 만든 뒤 잎 텐서가 바뀌었으므로(학습 단계 등), 위젯이 잎 텐서의 지금 값에서부터 순전파를 다시 실행했습니다. 모든 값을 새로 그리고({root} = {value}), 유도 과정도 이 값에서 다시 계산합니다.",
        "cap_forward_again_no_freed": "그래프가 해제되었고, 이 순전파는 사용자 코드를 부르므로 위젯이 다시 실행할 수 없습니다. 셀을 다시 실행해 새 그래프를 만드세요.",
        "cap_forward_again_no_modified": "그래프를 만든 뒤 잎 텐서가 바뀌었고(학습 단계 등), 이 순전파는 사용자 코드를 부르므로 위젯이 다시 실행할 수 없습니다. 지금 값의 그래프를 보려면 셀을 다시 실행하세요.",
        "engine_added": "엔진: 이번 backward() 호출이 {leaf}.grad에 {value}을(를) 더함 (지금 {grad})",
        "graph_partial": "읽을 수 있는 크기로 그래프의 일부만 보입니다. 지금 단계를 따라갑니다(− 또는 맞춤으로 전체 보기)",
        "forward_again": "해제되면 순전파 다시 실행",
        "forward_again_title": "그래프가 해제되었거나 만든 뒤 잎 텐서가 바뀌었으면 backward() 전에 잎 텐서의 지금 값에서부터 순전파를 다시 실행합니다(끄면 PyTorch의 오류를 볼 수 있습니다)",
    },
}

_FIELD = re.compile(r"\{(\w+)\}")


def strings(lang):
    """The whole table for ``lang`` (what the front end gets as the ``strings`` trait)."""
    if lang not in STRINGS:
        raise ValueError(f"lang must be one of {', '.join(LANGS)}, not {lang!r}")
    return dict(STRINGS[lang])


def fmt(lang, key, **args):
    """The text for ``key`` in ``lang`` with ``{name}`` fields filled (missing ones stay as is)."""
    template = STRINGS.get(lang, STRINGS["en"]).get(key) or STRINGS["en"][key]
    return _FIELD.sub(lambda m: str(args[m.group(1)]) if m.group(1) in args else m.group(0), template)


def render(lang, msg):
    """The words of a frame's message ``[key, args]`` in ``lang`` (nested messages included)."""
    key, args = msg
    return fmt(lang, key, **{k: _value(lang, v) for k, v in args.items()})


def _value(lang, v):
    if isinstance(v, dict) and "join" in v:
        return fmt(lang, "list_sep").join(_value(lang, m) for m in v["join"])
    if isinstance(v, (list, tuple)) and len(v) == 2 and isinstance(v[1], dict):
        return render(lang, v)
    return str(v)
