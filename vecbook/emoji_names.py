"""Emoji shortcodes (``:tada:``) and the emoji they stand for.

Slack writes an emoji typed or picked in a message as its short name between colons, so its
messages read as Slack shows them (``exports/slack.py``); and a query may name an emoji so too,
``:tada:`` finding 🎉 in any chat (``VecBook.search``). The names are Slack's (those of the
emoji-data set Slack uses, which GitHub's largely share): the few hundred in everyday use, kept
here rather than a dependency on a full emoji package. A name not listed (a workspace's custom
emoji, ``:partyparrot:``) stays as typed.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Each entry: the emoji, then its names (Slack's first, then the aliases people type).
# Two spaces part the entries of a line.
TABLE = """
😀 grinning  😃 smiley  😄 smile  😁 grin  😆 laughing satisfied  😅 sweat_smile
🤣 rolling_on_the_floor_laughing rofl  😂 joy  🙂 slightly_smiling_face  🙃 upside_down_face  😉 wink
😊 blush  😇 innocent  🥰 smiling_face_with_3_hearts  😍 heart_eyes  🤩 star-struck  😘 kissing_heart
😗 kissing  ☺️ relaxed  😚 kissing_closed_eyes  😋 yum  😛 stuck_out_tongue
😜 stuck_out_tongue_winking_eye  🤪 zany_face  😝 stuck_out_tongue_closed_eyes  🤑 money_mouth_face
🤗 hugging_face hugs  🤭 face_with_hand_over_mouth  🤫 shushing_face  🤔 thinking_face thinking
🤐 zipper_mouth_face  🤨 face_with_raised_eyebrow  😐 neutral_face  😑 expressionless  😶 no_mouth
😏 smirk  😒 unamused  🙄 face_with_rolling_eyes roll_eyes  😬 grimacing  🤥 lying_face  😌 relieved  😔 pensive
😪 sleepy  🤤 drooling_face  😴 sleeping  😷 mask  🤒 face_with_thermometer  🤢 nauseated_face
🤮 face_vomiting  🤧 sneezing_face  🥵 hot_face  🥶 cold_face  🥴 woozy_face  😵 dizzy_face
🥳 partying_face  🥲 smiling_face_with_tear
🤯 exploding_head  😎 sunglasses  🤓 nerd_face  🧐 face_with_monocle  😕 confused  😟 worried
🙁 slightly_frowning_face  ☹️ white_frowning_face  😮 open_mouth  😯 hushed  😲 astonished
😳 flushed  🥺 pleading_face  😦 frowning  😧 anguished  😨 fearful  😰 cold_sweat
😥 disappointed_relieved  😢 cry  😭 sob  😱 scream  😖 confounded  😣 persevere  😞 disappointed
😓 sweat  😩 weary  😫 tired_face  🥱 yawning_face  😤 triumph  😡 rage  😠 angry
🤬 face_with_symbols_on_mouth  😈 smiling_imp  👿 imp  💀 skull  💩 hankey poop shit  🤡 clown_face
👻 ghost  👽 alien  🤖 robot_face  🙈 see_no_evil  🙉 hear_no_evil  🙊 speak_no_evil  🫠 melting_face
🫡 saluting_face  🥹 face_holding_back_tears  💋 kiss  💌 love_letter  ❤️ heart  🧡 orange_heart
💛 yellow_heart  💚 green_heart  💙 blue_heart  💜 purple_heart  🖤 black_heart  🤍 white_heart
🤎 brown_heart  💔 broken_heart  ❣️ heart_exclamation  💕 two_hearts  💞 revolving_hearts
💓 heartbeat  💗 heartpulse  💖 sparkling_heart  💘 cupid  💝 gift_heart  ❤️‍🔥 heart_on_fire  💯 100
💢 anger  💥 boom collision  💫 dizzy  💦 sweat_drops  💨 dash  💬 speech_balloon  💭 thought_balloon
💤 zzz  👋 wave  🤚 raised_back_of_hand  🖐️ raised_hand_with_fingers_splayed  ✋ hand raised_hand
🖖 spock-hand  👌 ok_hand  🤏 pinching_hand  ✌️ v
🤞 crossed_fingers hand_with_index_and_middle_fingers_crossed  🤟 i_love_you_hand_sign
🤘 the_horns sign_of_the_horns  🤙 call_me_hand  👈 point_left  👉 point_right  👆 point_up_2
🖕 middle_finger reversed_hand_with_middle_finger_extended  👇 point_down  ☝️ point_up
👍 +1 thumbsup  👎 -1 thumbsdown  ✊ fist raised_fist  👊 facepunch punch  🤛 left-facing_fist
🤜 right-facing_fist  👏 clap  🙌 raised_hands  🫶 heart_hands  👐 open_hands  🤲 palms_up_together
🤝 handshake  🙏 pray  ✍️ writing_hand  💅 nail_care  🤳 selfie  💪 muscle  🧠 brain  👀 eyes  👁️ eye
👅 tongue  👄 lips  👶 baby  👦 boy  👧 girl  👨 man  👩 woman  👴 older_man  👵 older_woman
🙍 person_frowning  🙎 person_with_pouting_face  🙅 no_good  🙆 ok_woman  💁 information_desk_person
🙋 raising_hand  🙇 bow  🤦 face_palm facepalm  🤦‍♂️ man-facepalming  🤦‍♀️ woman-facepalming  🤷 shrug
🤷‍♂️ man-shrugging  🤷‍♀️ woman-shrugging  🏃 runner running  💃 dancer  🕺 man_dancing  🚶 walking
🐶 dog  🐱 cat  🐭 mouse  🐹 hamster  🐰 rabbit  🦊 fox_face  🐻 bear  🐼 panda_face  🐨 koala  🐯 tiger
🦁 lion_face  🐮 cow  🐷 pig  🐸 frog  🐵 monkey_face  🐔 chicken  🐧 penguin  🐦 bird  🐥 hatched_chick
🦅 eagle  🦆 duck  🦉 owl  🦇 bat  🐺 wolf  🐴 horse  🦄 unicorn_face unicorn  🐝 bee honeybee  🐛 bug
🦋 butterfly  🐌 snail  🐢 turtle  🐍 snake  🐙 octopus  🦀 crab  🐳 whale  🐬 dolphin  🐟 fish
🐠 tropical_fish  🦈 shark  🦥 sloth  🐉 dragon  💐 bouquet  🌸 cherry_blossom  🌹 rose  🌻 sunflower
🌷 tulip  🌱 seedling  🌲 evergreen_tree  🌳 deciduous_tree  🌴 palm_tree  🌵 cactus  🌿 herb
☘️ shamrock  🍀 four_leaf_clover  🍁 maple_leaf  🍂 fallen_leaf  🍃 leaves  🍄 mushroom
🌍 earth_africa  🌎 earth_americas  🌏 earth_asia  🌐 globe_with_meridians  ☀️ sunny
⛅ partly_sunny  ☁️ cloud  🌧️ rain_cloud  ⛈️ thunder_cloud_and_rain  🌨️ snow_cloud  🌪️ tornado
🌫️ fog  🌈 rainbow  ☂️ umbrella  ☔ umbrella_with_rain_drops  ⚡ zap  ❄️ snowflake  ☃️ snowman
🔥 fire  💧 droplet  🌊 ocean  🌑 new_moon  🌕 full_moon  🌙 crescent_moon  ⭐ star  🌟 star2
✨ sparkles  🍎 apple  🍏 green_apple  🍐 pear  🍊 tangerine  🍋 lemon  🍌 banana  🍉 watermelon
🍇 grapes  🍓 strawberry  🍒 cherries  🍑 peach  🍍 pineapple  🥑 avocado  🍆 eggplant  🌶️ hot_pepper
🥕 carrot  🌽 corn  🍞 bread  🥐 croissant  🧀 cheese_wedge  🥚 egg  🍳 fried_egg  🥓 bacon
🍔 hamburger  🍟 fries  🍕 pizza  🌭 hotdog  🥪 sandwich  🌮 taco  🌯 burrito  🥙 stuffed_flatbread
🥗 green_salad  🍝 spaghetti  🍜 ramen  🍣 sushi  🍚 rice  🍛 curry  🍱 bento  🍦 icecream  🍨 ice_cream
🍩 doughnut  🍪 cookie  🎂 birthday  🍰 cake  🍫 chocolate_bar  🍬 candy  🍿 popcorn  ☕ coffee  🍵 tea
🍶 sake  🍼 baby_bottle  🍺 beer  🍻 beers  🥂 clinking_glasses  🍷 wine_glass  🥃 tumbler_glass
🍸 cocktail  🍹 tropical_drink  🍾 champagne  🥤 cup_with_straw  🍽️ knife_fork_plate
🍴 fork_and_knife  🎉 tada  🎊 confetti_ball  🎈 balloon  🎁 gift  🎀 ribbon  🎄 christmas_tree
🎃 jack_o_lantern  🎆 fireworks  🎇 sparkler  🏆 trophy  🏅 sports_medal  🥇 first_place_medal
🥈 second_place_medal  🥉 third_place_medal  🎖️ medal  ⚽ soccer  🏀 basketball  🏈 football
⚾ baseball  🎾 tennis  🏐 volleyball  🏉 rugby_football  ⛳ golf  🎯 dart  🎳 bowling  🎮 video_game
🎲 game_die  🧩 jigsaw  ♟️ chess_pawn  🎭 performing_arts  🎨 art  🎵 musical_note  🎶 notes
🎤 microphone  🎧 headphones  🎸 guitar  🎷 saxophone  🎺 trumpet  🎻 violin  🥁 drum_with_drumsticks
🎫 ticket  🎬 clapper  🚗 car  🚗 red_car  🚕 taxi  🚌 bus  🚑 ambulance  🚒 fire_engine  🚓 police_car
🚚 truck  🚲 bike  🛴 scooter  🛵 motor_scooter  🚃 railway_car  🚋 train  🚂 steam_locomotive
🚄 bullettrain_side  🚇 metro  ✈️ airplane  🛩️ small_airplane  🚁 helicopter  🚀 rocket  🚢 ship
⛵ boat sailboat  ⚓ anchor  ⛽ fuelpump  🚧 construction  🚨 rotating_light
🚦 vertical_traffic_light  🏁 checkered_flag  🚩 triangular_flag_on_post  🗺️ world_map  🏠 house
🏡 house_with_garden  🏢 office  🏥 hospital  🏫 school  🏨 hotel  ⛪ church  ⛰️ mountain  🏕️ camping
🏖️ beach_with_umbrella  🏝️ desert_island  ⌚ watch  📱 iphone  💻 computer  ⌨️ keyboard
🖥️ desktop_computer  🖨️ printer  💿 cd  📀 dvd  💾 floppy_disk  📷 camera  📸 camera_with_flash
📹 video_camera  🎥 movie_camera  📺 tv  📻 radio  ☎️ telephone phone  📞 telephone_receiver
🔋 battery  🔌 electric_plug  💡 bulb  🔦 flashlight  🕯️ candle  💰 moneybag  💵 dollar  💶 euro
💷 pound  💴 yen  💳 credit_card  💎 gem  🔧 wrench  🔨 hammer  🛠️ hammer_and_wrench  🔩 nut_and_bolt
⚙️ gear  🔗 link  📎 paperclip  ✂️ scissors  📌 pushpin  📍 round_pushpin  📐 triangular_ruler
📏 straight_ruler  🔒 lock  🔓 unlock  🔑 key  🗝️ old_key  🔔 bell  🔕 no_bell  📢 loudspeaker  📣 mega
📯 postal_horn  ⌛ hourglass  ⏳ hourglass_flowing_sand  ⏰ alarm_clock  ⏱️ stopwatch
⏲️ timer_clock  🕐 clock1  📆 calendar  📅 date  🗓️ spiral_calendar_pad spiral_calendar
📇 card_index  📈 chart_with_upwards_trend  📉 chart_with_downwards_trend  📊 bar_chart
📋 clipboard  📝 memo pencil  ✏️ pencil2  ✒️ black_nib  🖋️ lower_left_fountain_pen fountain_pen
🖊️ lower_left_ballpoint_pen pen  📧 email e-mail  ✉️ envelope  📨 incoming_envelope
📩 envelope_with_arrow  📥 inbox_tray  📤 outbox_tray  📦 package  📫 mailbox  🏷️ label  🔖 bookmark
📖 book  📚 books  📓 notebook  📒 ledger  📄 page_facing_up  📃 page_with_curl  📰 newspaper
📁 file_folder  📂 open_file_folder  🗂️ card_index_dividers  🗑️ wastebasket  🔍 mag  🔎 mag_right
🔬 microscope  🔭 telescope  📡 satellite_antenna  💉 syringe  💊 pill  🧬 dna  🧹 broom  🧼 soap
🚽 toilet  🚿 shower  🛁 bathtub  🛏️ bed  🚪 door  🛋️ couch_and_lamp  🛒 shopping_trolley  🚬 smoking
✅ white_check_mark  ✔️ heavy_check_mark  ☑️ ballot_box_with_check  ❌ x
✖️ heavy_multiplication_x  ❎ negative_squared_cross_mark  ➕ heavy_plus_sign  ➖ heavy_minus_sign
➗ heavy_division_sign  ❓ question  ❔ grey_question  ❕ grey_exclamation
❗ exclamation heavy_exclamation_mark  ‼️ bangbang  ⁉️ interrobang  ⚠️ warning  ⛔ no_entry
🚫 no_entry_sign  📛 name_badge  ⭕ o  🆘 sos  🆗 ok  🆕 new  🆓 free  🆙 up  🆒 cool  🔝 top  🔜 soon
🔙 back  🔚 end  🔛 on  ♻️ recycle  ♾️ infinity  ➡️ arrow_right  ⬅️ arrow_left  ⬆️ arrow_up
⬇️ arrow_down  ↗️ arrow_upper_right  ↘️ arrow_lower_right  ↙️ arrow_lower_left
↖️ arrow_upper_left  ↕️ arrow_up_down  ↔️ left_right_arrow  🔄 arrows_counterclockwise
🔃 arrows_clockwise  🔁 repeat  🔀 twisted_rightwards_arrows  ⏩ fast_forward  ⏪ rewind
▶️ arrow_forward  ◀️ arrow_backward  ⏸️ double_vertical_bar  ⏹️ black_square_for_stop
⏺️ black_circle_for_record  ⏏️ eject  ℹ️ information_source  ©️ copyright  ®️ registered  ™️ tm
#️⃣ hash  *️⃣ keycap_star  0️⃣ zero  1️⃣ one  2️⃣ two  3️⃣ three  4️⃣ four  5️⃣ five  6️⃣ six
7️⃣ seven  8️⃣ eight  9️⃣ nine  🔟 keycap_ten  🔴 red_circle  🟠 large_orange_circle
🟡 large_yellow_circle  🟢 large_green_circle  🔵 large_blue_circle  🟣 large_purple_circle
🟤 large_brown_circle  ⚫ black_circle  ⚪ white_circle  🟥 large_red_square  🟩 large_green_square
🟦 large_blue_square  ⬛ black_large_square  ⬜ white_large_square  🔺 small_red_triangle
🔻 small_red_triangle_down  🔶 large_orange_diamond  🔷 large_blue_diamond  🔸 small_orange_diamond
🔹 small_blue_diamond  💠 diamond_shape_with_a_dot_inside  🔘 radio_button  💲 heavy_dollar_sign
💱 currency_exchange  ☮️ peace_symbol  ☯️ yin_yang  ✡️ star_of_david  ☸️ wheel_of_dharma
☦️ orthodox_cross  ☪️ star_and_crescent  🕉️ om_symbol  ⚛️ atom_symbol  ☢️ radioactive_sign
☣️ biohazard_sign  ♂️ male_sign  ♀️ female_sign  ⚕️ medical_symbol  🔱 trident  ⚜️ fleur_de_lis
🔰 beginner  ✳️ eight_spoked_asterisk  ❇️ sparkle  ✴️ eight_pointed_black_star  🆚 vs  🔇 mute
🔈 speaker  🔉 sound  🔊 loud_sound  📵 no_mobile_phones  📳 vibration_mode  📴 mobile_phone_off
📶 signal_strength  🏳️ white_flag  🏳️ waving_white_flag  🏴 waving_black_flag  🏳️‍🌈 rainbow-flag
🏴‍☠️ pirate_flag
🇨🇳 cn  🇩🇪 de  🇪🇸 es  🇫🇷 fr  🇬🇧 gb uk  🇮🇹 it  🇯🇵 jp  🇰🇷 kr  🇷🇺 ru  🇺🇸 us
"""
# Slack's skin-tone modifier, written as a shortcode of its own after the emoji: :+1::skin-tone-3:.
SKIN_TONES = {f"skin-tone-{n}": chr(0x1F3FB + n - 2) for n in range(2, 7)}
# A shortcode: letters, digits, ``_ + -`` between colons, not inside a word, a time or a path
# (``10:100:00``, ``https://x/:id:``); right after another is fine (``:heart::heart:``).
SHORTCODE = re.compile(r"(?<![\w/]):([a-z0-9_+\-]+):((?::skin-tone-[2-6]:)?)")
# A run of shortcodes, one right after another: not after a colon, so the doubled colons of a
# path of code (``serde::de::Visitor``) or an IPv6 address (``fe80::100:1``) hold none.
_RUN = re.compile(r"(?<![\w/:])(?::[a-z0-9_+\-]+:)+")
# Code, whose text is shown as typed: a fenced block, or a span within one line.
_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
# Slack's country flags: :flag-pt: for any country (the ten it once named alone, :jp:, are in TABLE).
_FLAG = re.compile(r"flag-([a-z]{2})")


@lru_cache(maxsize=1)
def names() -> dict[str, str]:
    """Every listed short name and the emoji it stands for."""
    table: dict[str, str] = {}
    for entry in re.split(r"  +|\n", TABLE.strip()):
        emoji, *aliases = entry.split(" ")
        table.update(dict.fromkeys(aliases, emoji))
    return table


def emoji_for(name: str) -> str | None:
    """The emoji a short name (without colons) stands for, or None when it is not listed."""
    found = names().get(name)
    if found is None and (flag := _FLAG.fullmatch(name)):
        found = "".join(chr(0x1F1E6 + ord(c) - ord("a")) for c in flag.group(1))
    return found


def with_emoji(text: str) -> str:
    """``text`` with each listed shortcode (and its skin tone) as the emoji it stands for, except
    inside code (a span in backticks, a fenced block), which Slack, Discord and GitHub show as typed."""
    if ":" not in text:
        return text
    if "`" not in text:
        return _RUN.sub(_replace_run, text)
    pieces, last = [], 0
    for code in _CODE.finditer(text):
        pieces += [_RUN.sub(_replace_run, text[last:code.start()]), code.group()]
        last = code.end()
    return "".join(pieces) + _RUN.sub(_replace_run, text[last:])


def _replace_run(run: re.Match[str]) -> str:
    return SHORTCODE.sub(_replace, run.group())


def _replace(match: re.Match[str]) -> str:
    found = emoji_for(match.group(1))
    if found is None:
        return match.group(0)
    tone = match.group(2).strip(":")
    return found.replace("\ufe0f", "") + SKIN_TONES[tone] if tone else found
