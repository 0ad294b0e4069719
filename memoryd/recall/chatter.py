"""Words that say nothing a memory could answer: what people say to an agent to greet it, thank it, agree or
refuse, and the bare commands of the work at hand (run, fix, commit, the tests, this file). Function words come
from stopwords-iso (58 languages); these are what its lists leave out. Lower case; a phrase is space-separated."""

from __future__ import annotations

GREETINGS = """
hi hello hey heya hiya howdy yo sup morning evening afternoon night greetings welcome bye goodbye cya later
farewell goodnight hola adiós adios buenos buenas días bonjour salut bonsoir merci hallo servus tschüss moin ciao
grazie buongiorno olá obrigado obrigada oi tchau привет здравствуйте пока спасибо merhaba teşekkürler
xin chào chào tạm biệt cảm ơn
你好 您好 再见 拜拜 谢谢 多谢 早上好 晚安
สวัสดี ลาก่อน ขอบคุณ ครับ ค่ะ คะ จ้า
こんにちは こんばんは おはよう さようなら ありがとう ございます お疲れ様 です
안녕하세요 안녕 감사합니다 고맙습니다
مرحبا شكرا وداعا نمستے नमस्ते धन्यवाद शुक्रिया
"""

ACKNOWLEDGEMENTS = """
thanks thank thx ty tysm cheers appreciated appreciate great awesome nice cool perfect excellent amazing
brilliant wonderful fantastic superb lovely neat sweet good fine alright ok okay okey k kk yes yeah yep yup
yea sure certainly absolutely definitely indeed right correct exactly agreed agree no nope nah not never
lgtm sgtm wfm ack noted understood got gotcha makes sense see interesting hmm hm huh oh ah aha wow whoa oops
lol haha hehe lmao rofl sorry apologies worries problem welcome bad wait hold sec moment minute nvm nevermind
mind forget whatever meh please pls plz sounds looks seems job work day days tomorrow tonight today soon later
talk chat care luck cheers mate buddy dude folks guys friend assistant claude codex gpt chatgpt gemini copilot
opencode openclaw bot understand wrong mistake guten morgen tag abend nacht buongiorno buonasera buenas noches
tardes
vâng dạ ừ được rồi không có đúng tốt hay tuyệt quá vậy thôi
好的 好 行 可以 对 是的 不是 没问题 不用 没事 嗯 哦 哈哈 太好了 不错 明白 知道了
โอเค ได้ ได้เลย ใช่ ไม่ ไม่ใช่ ดี เยี่ยม เข้าใจ แล้ว จ้ะ
はい いいえ うん ええ 了解 わかりました 大丈夫 いいね
네 예 아니요 좋아요 알겠습니다
sí vale claro perfecto genial oui d'accord parfait génial ja nein gut genau klar super да нет хорошо ладно отлично
"""

COMMANDS = """
run rerun execute start restart stop kill build rebuild compile make install uninstall update upgrade bump
fix repair debug solve resolve commit push pull merge rebase checkout revert undo redo retry again continue
proceed carry keep going go next step do try skip cancel abort deploy ship release publish open close save
show print display list read view check inspect look tail cat grep find search open format reformat lint
refactor rename move copy delete remove drop add insert append create write generate implement change edit
modify replace simplify clean cleanup tidy shorten shorter longer expand explain describe summarize summarise
summary tl;dr tldr elaborate clarify repeat translate review approve verify test tests testing spec specs
coverage suite unit lint linter typecheck mypy ruff eslint prettier pytest npm pip yarn cargo git diff
status log logs output error errors warning warnings bug bugs issue failing failed fail fails broken file
files folder directory code function method class variable line lines comment comments docstring docstrings
type types hint hints import imports dependency dependencies package packages version branch pr prs
pull request requests server dev local project repo repository changes change stuff thing things detail details
bullet bullets points table markdown json format option first second last one two both neither all none
leave roll rollback faster slower quicker increase decrease improve optimize optimise speed statement
statements print prints main master trunk head origin upstream
chạy sửa lỗi tiếp tục đi thử lại xoá xóa thêm sửa đổi kiểm tra
运行 测试 修复 错误 提交 继续 重试 删除 添加 代码 文件
รัน เทสต์ ทดสอบ แก้ ต่อ ทำ เลย
"""


def chatter_words() -> frozenset[str]:
    words: set[str] = set()
    for block in (GREETINGS, ACKNOWLEDGEMENTS, COMMANDS):
        for line in block.strip().splitlines():
            words.update(line.split())
    return frozenset(words)


# What a prompt that needs no memory sounds like, and what one that asks memory sounds like, for the check by
# meaning (gate.ChatterCheck): a multilingual model puts "muchas gracias" or "辛苦了" nearer the first kind
# without a word list for every language.
QUESTIONS = (
    "what did we decide about the database?",
    "how does our retry logic work?",
    "when did she move to a new city?",
    "what did he say about his family?",
    "remind me what we agreed on last week",
    "which library do we use for parsing dates?",
    "why did the deploy fail last time?",
    "who is responsible for the billing service?",
    "where was the conference held?",
    "what happened at the meeting with the investors?",
)
ANCHORS = (
    "hello, how are you?",
    "thank you, that's great",
    "okay, sounds good",
    "yes, go ahead",
    "no, stop",
    "goodbye, see you later",
    "run the tests",
    "fix the error",
    "commit and push the changes",
    "continue",
    "refactor this function",
    "explain this code",
    "undo that change",
    "tell me a joke",
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# A prompt that opens with one of these (after LEAD_INS) is an instruction about the work at hand: it needs the
# code, not memory, unless it points back (MEMORY_CUES). Verbs that ask for memory itself (remind, tell, find,
# show, list, summarize, recall, search) are not here.
WORK_VERBS = _words(
    """add append adjust build bump change clean compile convert copy create debug delete deploy document drop
    edit extract fix format generate handle implement improve inline insert install lint make merge migrate move
    optimize optimise port push refactor reformat remove rename reorder replace restructure revert rewrite run
    simplify sort split squash stash swap switch test translate tweak undo update upgrade use validate wrap write
    thêm sửa viết xoá xóa chạy tạo đổi 添加 修改 写 删除 运行 更新 重构 创建 修复 实现 เพิ่ม แก้ เขียน ลบ รัน สร้าง
    añade agrega arregla escribe elimina ejecuta actualiza usa crea ajoute corrige écris supprime lance utilise
    crée füge schreib schreibe lösche entferne behebe nutze erstelle"""
)
FIRST_PERSON = _words(  # a question with one of these, and nothing else, asks about the user ("where do I work?")
    """i me my mine myself we us our ours ourselves tôi mình ta chúng 我 我们 咱们 我的 ผม ฉัน เรา ดิฉัน หนู 私 僕 俺
    yo mi mis nosotros nuestro nuestra je moi mon ma mes nous notre nos ich mich mein meine wir uns unser я мой моя
    мы наш eu meu minha nós nosso io mio mia noi nostro"""
)
LEAD_INS = _words(
    """please pls plz kindly can could would will you u now ok okay then and also just let's lets so alright right
    hey go ahead và hãy 请 帮 我 ช่วย หน่อย por favor s'il te plaît bitte"""
)
MEMORY_CUES = (
    "last time",
    "like we",
    "as we",
    "like before",
    "as before",
    "the way we",
    "as usual",
    "our usual",
    "remember",
    "previous",
    "earlier",
    "yesterday",
    "last week",
    "last month",
    "we decided",
    "we agreed",
    "we discussed",
    "same as",
    "lần trước",
    "như trước",
    "上次",
    "之前",
    "以前",
    "ครั้งก่อน",
    "เหมือนเดิม",
)
